// Float32 products on cuBLAS at the precision the call allows
// (lltm_set_float32_matmul_precision): SGEMM for exact float32, GEMMEX with
// TF32 or bfloat16 tensor cores (float32 accumulation) where allowed.
#pragma once

#include <cstdint>

#include "lltm.h"
#include "runtime/cuda_check.h"

#if LLTM_HAVE_CUBLAS
namespace lltm::cuda {

// C = op(A) op(B) + beta C, column-major, at `float32_precision` (LLTM_MATMUL_PRECISION_*).
inline cublasStatus_t sgemm(cublasHandle_t h, int32_t float32_precision, cublasOperation_t ta, cublasOperation_t tb,
                            int m, int n, int k, const float* A, int lda, const float* B, int ldb, float beta,
                            float* C, int ldc) {
  const float one = 1;
  if (float32_precision == LLTM_MATMUL_PRECISION_HIGHEST)
    return cublasSgemm(h, ta, tb, m, n, k, &one, A, lda, B, ldb, &beta, C, ldc);
  const cublasComputeType_t compute = float32_precision == LLTM_MATMUL_PRECISION_HIGH ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                                       : CUBLAS_COMPUTE_32F_FAST_16BF;
  return cublasGemmEx(h, ta, tb, m, n, k, &one, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, &beta, C, CUDA_R_32F, ldc,
                      compute, CUBLAS_GEMM_DEFAULT);
}

}  // namespace lltm::cuda
#endif
