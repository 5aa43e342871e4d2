// The library's own product kernel on the tensor cores, for bfloat16 and
// float16 operands (float32 sums, C rounded once): what the half types'
// products run on where cuBLAS is absent (a build without it, or a
// prebuilt library that found none) or not wanted (LLTM_CUDA_KERNELS=fused),
// so that such a build stays within reach of cuBLAS's speed rather than
// running the scalar kernel.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "math/gemm.h"

namespace lltm::cuda {

// C = A B + beta C (C not read when beta is 0), operands of any strides, for
// T bfloat16 or float16 and C of type T or float; false (nothing launched)
// where the device has no bfloat16/float16 mma (before sm_80) or the product
// is too small for the tensor cores to pay.
template <typename T, typename TC>
bool tensor_core_gemm(cudaStream_t stream, Matrix<const T> A, Matrix<const T> B, Matrix<TC> C, TC beta);

}  // namespace lltm::cuda
