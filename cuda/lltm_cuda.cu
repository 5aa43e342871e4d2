// The LLTM cell on CUDA: the choice between the step's two paths (see
// kernel_choice.h): the fused kernels (step_fused.cu) for small sizes, where
// launches dominate, and cuBLAS (step_cublas.cu) for large ones. All math runs
// in the kernel's own type: double stays double throughout.
#include <string>

#include "device.h"
#include "dispatch.h"
#include "kernel_choice.h"
#include "lltm_cuda.h"
#include "step_cublas.h"
#include "step_fused.h"
#include "step_tensors.cuh"

namespace lltm::cuda {

namespace {

#if !LLTM_HAVE_CUBLAS
// The cuBLAS path in a build without cuBLAS: only LLTM_CUDA_KERNELS=cublas
// (or a chooser bug) gets here, and it must not return as if it had run.
[[noreturn]] void no_cublas(const char* fn) {
  fail(LLTM_ERR_BACKEND_UNAVAILABLE, std::string(fn) +
                                         ": the cuBLAS path was asked for (LLTM_CUDA_KERNELS=cublas), but this build "
                                         "of liblltm_cuda has no cuBLAS; unset LLTM_CUDA_KERNELS or rebuild with cuBLAS");
}
#endif

template <typename T>
void forward(const ForwardArgs& a, int32_t dtype, DeviceState& dev) {
  const StepPath path = choose_step_path(a.n.batch, a.n.state, a.n.state + a.n.features, fits_int32(a));
#if LLTM_HAVE_CUBLAS
  if (path == StepPath::kCublas) return cublas_forward<T>(a, dtype, dev);
#else
  (void)dtype;
  if (path == StepPath::kCublas) no_cublas("lltm_forward");
#endif
  fused_forward<T>(a, path == StepPath::kFused32, dev.stream);
}

template <typename T>
void backward(const BackwardArgs& a, int32_t dtype, DeviceState& dev) {
  const StepPath path = choose_step_path(a.n.batch, a.n.state, a.n.state + a.n.features, fits_int32(a));
#if LLTM_HAVE_CUBLAS
  if (path == StepPath::kCublas) return cublas_backward<T>(a, dtype, dev);
#else
  (void)dtype;
  if (path == StepPath::kCublas) no_cublas("lltm_backward");
#endif
  fused_backward<T>(a, path == StepPath::kFused32, dev.stream);
}

}  // namespace

void lltm_forward(const ForwardArgs& args, int32_t dtype, int device) {
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_forward", [&] { forward<scalar_t>(args, dtype, dev); });
}

void lltm_backward(const BackwardArgs& args, int32_t dtype, int device) {
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_backward", [&] { backward<scalar_t>(args, dtype, dev); });
}

}  // namespace lltm::cuda
