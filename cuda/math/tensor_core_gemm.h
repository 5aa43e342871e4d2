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

// C = A B + beta C (C not read when beta is 0), operands of any strides;
// false (nothing launched) where the device has no bfloat16/float16 mma
// (before sm_80) or the product is too small for the tensor cores to pay.
bool tensor_core_gemm(cudaStream_t stream, Matrix<const __nv_bfloat16> A, Matrix<const __nv_bfloat16> B,
                      Matrix<__nv_bfloat16> C, __nv_bfloat16 beta);
bool tensor_core_gemm(cudaStream_t stream, Matrix<const __half> A, Matrix<const __half> B, Matrix<__half> C,
                      __half beta);
bool tensor_core_gemm(cudaStream_t stream, Matrix<const __nv_bfloat16> A, Matrix<const __nv_bfloat16> B,
                      Matrix<float> C, float beta);
bool tensor_core_gemm(cudaStream_t stream, Matrix<const __half> A, Matrix<const __half> B, Matrix<float> C,
                      float beta);

}  // namespace lltm::cuda
