// The step's forward. float32 and float64 take one of two paths
// (runtime/kernel_choice.h): the fused kernels (step/fused.cu) for small
// sizes, where launches dominate, and cuBLAS (step/cublas.cu) for large ones,
// all math in the call's compute type (double stays double throughout).
// bfloat16 and float16 run as they are (step/half.cu), computed in float.
#include "math/dtype.cuh"
#include "op_args.h"
#include "ops/forward.cuh"
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
void forward(const ForwardArgs& a, DeviceState& dev, int32_t float32_precision) {
  const StepPath path = choose_step_path(a.n.batch, a.n.state, a.n.state + a.n.features, fits_int32(a));
  if (path == StepPath::kCublas && !blas_available()) no_cublas("lltm_forward");
  if constexpr (kIsHalf<T>) {
    // One path at every size: its products on cuBLAS where the build has it (else the own kernel).
    half_forward<T>(a, dev);
  } else {
#if LLTM_HAVE_CUBLAS
    if (path == StepPath::kCublas) return cublas_forward<T>(a, dev, float32_precision);
#endif
    fused_forward<T>(a, path == StepPath::kFused32, dev.stream);
  }
}

}  // namespace

void op_forward(const OpCall& call, int device) {
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  with_float_type(call.compute, "lltm_forward", [&](auto type) {
    forward<typename decltype(type)::type>(forward_args(call), dev, call.float32_matmul_precision);
  });
}

LLTM_CUDA_HALF_OP(FORWARD, op_forward);

}  // namespace lltm::cuda
