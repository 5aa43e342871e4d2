// linear's gradients as products over the call's N rows (math/gemm.h):
// d_x = grad_y W, d_weight = grad_yᵀ x (added to d_weight's contents under
// LLTM_ACCUMULATE_PARAM_GRADS), d_bias the column sums of grad_y (likewise);
// each only where its output is given; in bfloat16 and float16 as they are
// (float32 accumulation) like linear.
#include "math/dtype.cuh"
#include "math/gemm.h"
#include "op_slots.h"
#include "ops/linear_backward.cuh"
#include "runtime/device.h"
#include "runtime/kernel_choice.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
void linear_backward(const OpCall& call, DeviceState& dev) {
  namespace s = slots::LINEAR_BACKWARD;
  const bool accumulate = (call.flags & LLTM_ACCUMULATE_PARAM_GRADS) != 0;
  const GemmEngine engine = gemm_engine(dev, use_own_gemm(), call.float32_matmul_precision);
  const Matrix<const T> grad_y = matrix<const T>(*call.tensors[s::grad_y]);
  if (const lltm_tensor* d_x = call.tensors[s::d_x])
    gemm_any_strides<T>(engine, grad_y, matrix<const T>(*call.tensors[s::weight]), matrix<T>(*d_x), false);
  if (const lltm_tensor* d_weight = call.tensors[s::d_weight])
    gemm_any_strides<T>(engine, grad_y.transposed(), matrix<const T>(*call.tensors[s::x]), matrix<T>(*d_weight),
                        accumulate);
  if (const lltm_tensor* d_bias = call.tensors[s::d_bias])
    column_sums<T>(dev.stream, grad_y, static_cast<T*>(d_bias->data), d_bias->strides[0], accumulate);
}

}  // namespace

void op_linear_backward(const OpCall& call, int device) {
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  with_float_type(call.compute, "lltm_linear_backward", [&](auto type) {
    linear_backward<typename decltype(type)::type>(call, dev);
  });
}

LLTM_CUDA_HALF_OP(LINEAR_BACKWARD, op_linear_backward);

}  // namespace lltm::cuda
