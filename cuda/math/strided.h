// Element-wise copy, conversion, fill and axpy of strided tensors (up to
// LLTM_MAX_DIMS) on the current device, on `stream`.
#pragma once

#include <cuda_runtime.h>

#include "lltm_args.h"

namespace lltm::cuda {

// dst and src have equal sizes and live on the current device; both hold
// elements of `dtype` (any float type: copied as they are), whatever their
// descriptors say.
void strided_copy(const lltm_tensor& dst, const lltm_tensor& src, int32_t dtype, cudaStream_t stream);
// As strided_copy, from src's dtype to dst's (each descriptor's own): the
// bytes as they are where the two agree, else each element converted,
// rounded to nearest even (math/dtype.cuh).
void strided_convert(const lltm_tensor& dst, const lltm_tensor& src, cudaStream_t stream);
// Every element of dst (of its descriptor's float dtype) set to value, rounded to nearest even.
void strided_fill(const lltm_tensor& dst, double value, cudaStream_t stream);
// y += alpha * x, equal sizes.
void strided_axpy(const lltm_tensor& y, double alpha, const lltm_tensor& x, int32_t dtype, cudaStream_t stream);

}  // namespace lltm::cuda
