// Matrix products over strided views, for the sequence engine: cuBLAS
// (SGEMM/DGEMM, no reduced precision) where the toolkit has it and the
// operands are laid out as BLAS reads them, the library's own tiled kernel
// otherwise (any strides, 64-bit offsets), and column sums for bias grads.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda_check.h"

namespace lltm::cuda {

// Element (r, c) at data[r * rs + c * cs].
template <typename T>
struct Matrix {
  T* data;
  int64_t rows, cols, rs, cs;
  Matrix transposed() const { return {data, cols, rows, cs, rs}; }
  template <typename U = T, typename = std::enable_if_t<!std::is_const_v<U>>>
  operator Matrix<const U>() const {
    return {data, rows, cols, rs, cs};
  }
};

template <typename T>
Matrix<T> row_major(T* data, int64_t rows, int64_t cols) {
  return {data, rows, cols, cols, 1};
}

// Where the products run: the stream, and the cuBLAS handle bound to it
// (null, or absent from the build, to use the library's own kernel).
struct GemmEngine {
  cudaStream_t stream;
#if LLTM_HAVE_CUBLAS
  cublasHandle_t blas;
#endif
};

// C = A B + beta C, with A [M, K], B [K, N], C [M, N]; C is not read when
// beta is 0. K may be 0 (C = beta C).
template <typename T>
void gemm(const GemmEngine& engine, Matrix<const T> A, Matrix<const T> B, Matrix<T> C, T beta);

// out[c] = sum over r of M[r][c] (+ out[c] when accumulate), for the bias gradient.
template <typename T>
void column_sums(cudaStream_t stream, Matrix<const T> M, T* out, int64_t out_stride, bool accumulate);

}  // namespace lltm::cuda
