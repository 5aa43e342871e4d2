// Element-wise copy and fill of strided tensors (up to LLTM_MAX_DIMS) on one device.
#pragma once

#include <cuda_runtime.h>

#include "lltm_args.h"

namespace lltm::cuda {

// dst and src have equal sizes and live on the current device.
void strided_copy(const lltm_tensor& dst, const lltm_tensor& src, int32_t dtype, cudaStream_t stream);
void strided_fill(const lltm_tensor& dst, double value, int32_t dtype, cudaStream_t stream);
// y += alpha * x, equal sizes.
void strided_axpy(const lltm_tensor& y, double alpha, const lltm_tensor& x, int32_t dtype, cudaStream_t stream);

}  // namespace lltm::cuda
