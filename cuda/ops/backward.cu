// The step's backward: float32 and float64 on one of two paths
// (runtime/kernel_choice.h), in the call's compute type (double stays double
// throughout); bfloat16 and float16 as they are (step/half.cu), computed in
// float.
#include "math/dtype.cuh"
#include "op_args.h"
#include "ops/backward.cuh"
#include "runtime/device.h"
#include "runtime/kernel_choice.h"
#include "runtime/op_registry.h"
#include "step/cublas.h"
#include "step/fused.h"
#include "step/half.h"
#include "step/tensors.cuh"

namespace lltm::cuda {

namespace {

template <typename T>
void backward(const BackwardArgs& a, DeviceState& dev, int32_t float32_precision) {
  const StepPath path = choose_step_path(a.n.batch, a.n.state, a.n.state + a.n.features, fits_int32(a));
  if (path == StepPath::kCublas && !blas_available()) no_cublas("lltm_backward");
  if constexpr (kIsHalf<T>) {
    // One path at every size: its products on cuBLAS where the build has it (else the own kernel).
    half_backward<T>(a, dev);
  } else {
#if LLTM_HAVE_CUBLAS
    if (path == StepPath::kCublas) return cublas_backward<T>(a, dev, float32_precision);
#endif
    fused_backward<T>(a, path == StepPath::kFused32, dev.stream);
  }
}

}  // namespace

void op_backward(const OpCall& call, int device) {
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  with_float_type(call.compute, "lltm_backward", [&](auto type) {
    backward<typename decltype(type)::type>(backward_args(call), dev, call.float32_matmul_precision);
  });
}

LLTM_CUDA_HALF_OP(BACKWARD, op_backward);

}  // namespace lltm::cuda
