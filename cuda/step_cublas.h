// The step on cuBLAS (large sizes), in builds whose toolkit has it.
#pragma once

#include "device.h"
#include "lltm_args.h"

namespace lltm::cuda {

#if LLTM_HAVE_CUBLAS
template <typename T>
void cublas_forward(const ForwardArgs& args, int32_t dtype, DeviceState& dev);
template <typename T>
void cublas_backward(const BackwardArgs& args, int32_t dtype, DeviceState& dev);
#endif

}  // namespace lltm::cuda
