// linear's gradients as products over the call's N rows (math/gemm.h):
// d_x = grad_y W, d_weight = grad_yᵀ x (added to d_weight's contents under
// LLTM_ACCUMULATE_PARAM_GRADS), d_bias the column sums of grad_y (likewise);
// each only where its output is given; in bfloat16 and float16 as they are
// (float32 accumulation) like linear. Where d_x is asked for too, the
// backward goes on below it and nothing there reads d_weight or d_bias but
// the optimizer: they then run on the side stream (runtime/side_work.h),
// queued after d_x so that the next op (a recurrence that takes the whole
// device, on the higher-priority stream) starts first and they fill in beside.
#include <optional>
#include <vector>

#include "math/dtype.cuh"
#include "math/gemm.h"
#include "op_slots.h"
#include "ops/linear_backward.cuh"
#include "runtime/device.h"
#include "runtime/kernel_choice.h"
#include "runtime/op_registry.h"
#include "runtime/side_work.h"

namespace lltm::cuda {

namespace {

template <typename T>
void linear_backward(const OpCall& call, int device, DeviceState& dev) {
  namespace s = slots::LINEAR_BACKWARD;
  const bool accumulate = (call.flags & LLTM_ACCUMULATE_PARAM_GRADS) != 0;
  const GemmEngine engine = gemm_engine(dev, use_own_gemm(), call.float32_matmul_precision);
  const lltm_tensor &grad_y = *call.tensors[s::grad_y], &x = *call.tensors[s::x];
  const lltm_tensor *d_x = call.tensors[s::d_x], *d_weight = call.tensors[s::d_weight], *d_bias = call.tensors[s::d_bias];
  const Matrix<const T> dY = matrix<const T>(grad_y);
  if (d_x != nullptr) gemm_any_strides<T>(engine, dY, matrix<const T>(*call.tensors[s::weight]), matrix<T>(*d_x), false);
  if (d_weight == nullptr && d_bias == nullptr) return;
  std::optional<SideWork> side;
  if (d_x != nullptr && !forced("one-stream")) {
    std::vector<Span> touched{tensor_span(grad_y), tensor_span(x)};
    for (const lltm_tensor* d : {d_weight, d_bias})
      if (d != nullptr) touched.push_back(tensor_span(*d));
    const double flops = d_weight != nullptr ? 2.0 * double(dY.rows) * double(dY.cols) * double(x.sizes[1]) : 0.0;
    side.emplace(device, std::move(touched), flops);
  }
  const GemmEngine products = side ? side_gemm_engine(dev, engine) : engine;
  if (d_weight != nullptr)
    gemm_any_strides<T>(products, dY.transposed(), matrix<const T>(x), matrix<T>(*d_weight), accumulate);
  if (d_bias != nullptr)
    column_sums<T>(products.stream, dY, static_cast<T*>(d_bias->data), d_bias->strides[0], accumulate);
}

}  // namespace

void op_linear_backward(const OpCall& call, int device) {
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  with_float_type(call.compute, "lltm_linear_backward", [&](auto type) {
    linear_backward<typename decltype(type)::type>(call, device, dev);
  });
}

LLTM_CUDA_HALF_OP(LINEAR_BACKWARD, op_linear_backward);

}  // namespace lltm::cuda
