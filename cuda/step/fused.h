// The step's fused kernels (small sizes): one launch each way.
#pragma once

#include <cuda_runtime.h>

#include "lltm_args.h"

namespace lltm::cuda {

// int32_indexing: every tensor's offsets fit in int32_t (fits_int32).
template <typename T>
void fused_forward(const ForwardArgs& args, bool int32_indexing, cudaStream_t stream);
template <typename T>
void fused_backward(const BackwardArgs& args, bool int32_indexing, cudaStream_t stream);

}  // namespace lltm::cuda
