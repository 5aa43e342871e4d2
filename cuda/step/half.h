// The step in bfloat16 and float16, at every size: the products on tensor
// cores with float32 accumulation (math/gemm.h: cuBLAS where the build and
// the machine have it, the library's own kernel otherwise), the cell's math
// in float (step/pointwise.cuh), no float32 copies of the tensors.
#pragma once

#include "lltm_args.h"
#include "runtime/device.h"

namespace lltm::cuda {

// T: __nv_bfloat16 or __half.
template <typename T>
void half_forward(const ForwardArgs& args, DeviceState& dev);
template <typename T>
void half_backward(const BackwardArgs& args, DeviceState& dev);

}  // namespace lltm::cuda
