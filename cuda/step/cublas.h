// The step on cuBLAS (large sizes), in builds whose toolkit has it.
#pragma once

#include "lltm_args.h"
#include "runtime/device.h"

namespace lltm::cuda {

#if LLTM_HAVE_CUBLAS
// float32_precision: LLTM_MATMUL_PRECISION_*, how the float32 products may round.
template <typename T>
void cublas_forward(const ForwardArgs& args, DeviceState& dev, int32_t float32_precision);
template <typename T>
void cublas_backward(const BackwardArgs& args, DeviceState& dev, int32_t float32_precision);
#endif

// The cuBLAS path where cuBLAS is not there (not in the build, or not found
// at run time): only LLTM_CUDA_KERNELS=cublas (or a chooser bug) gets here,
// and it must not return as if it had run.
[[noreturn]] void no_cublas(const char* fn);

}  // namespace lltm::cuda
