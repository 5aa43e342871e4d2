// y = x Wᵀ + bias as one product (math/gemm.h), the bias first broadcast
// into y and the product added to it, in the call's compute type: float32,
// float64, or bfloat16 and float16 as they are (float32 accumulation).
#include "math/dtype.cuh"
#include "math/gemm.h"
#include "math/strided.h"
#include "op_slots.h"
#include "ops/linear.cuh"
#include "runtime/device.h"
#include "runtime/kernel_choice.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
void linear(const OpCall& call, int32_t dtype, DeviceState& dev) {
  namespace s = slots::LINEAR;
  const lltm_tensor &x = *call.tensors[s::x], &weight = *call.tensors[s::weight], &y = *call.tensors[s::y];
  const lltm_tensor* bias = call.tensors[s::bias];
  if (bias != nullptr) {
    // bias [M] read as [N, M] with a row stride of 0.
    lltm_tensor rows = y;
    rows.data = bias->data;
    rows.strides[0] = 0;
    rows.strides[1] = bias->strides[0];
    strided_copy(y, rows, dtype, dev.stream);
  }
  gemm_any_strides<T>(gemm_engine(dev, use_own_gemm(), call.float32_matmul_precision), matrix<const T>(x),
                      matrix<const T>(weight).transposed(), matrix<T>(y), bias != nullptr);
}

}  // namespace

void op_linear(const OpCall& call, int device) {
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  with_float_type(call.compute, "lltm_linear", [&](auto type) {
    linear<typename decltype(type)::type>(call, call.compute, dev);
  });
}

LLTM_CUDA_HALF_OP(LINEAR, op_linear);

}  // namespace lltm::cuda
