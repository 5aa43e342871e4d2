// The step on cuBLAS (large sizes), in builds whose toolkit has it.
#pragma once

#include "lltm_args.h"
#include "runtime/device.h"

namespace lltm::cuda {

#if LLTM_HAVE_CUBLAS
template <typename T>
void cublas_forward(const ForwardArgs& args, DeviceState& dev);
template <typename T>
void cublas_backward(const BackwardArgs& args, DeviceState& dev);
#else
// The cuBLAS path in a build without cuBLAS: only LLTM_CUDA_KERNELS=cublas
// (or a chooser bug) gets here, and it must not return as if it had run.
[[noreturn]] void no_cublas(const char* fn);
#endif

}  // namespace lltm::cuda
