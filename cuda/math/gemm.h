// Matrix products over strided views, for the sequence engine and linear:
// cuBLAS (float32 at the precision the call allows, math/float32_blas.h;
// float64 exact; bfloat16 and float16 on tensor cores with float32
// accumulation) where the toolkit has it and the
// operands are laid out as BLAS reads them, the library's own tiled kernels
// otherwise (any strides, 64-bit offsets; the half types on the tensor
// cores, math/tensor_core_gemm.h), and column sums for bias grads.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <memory>
#include <type_traits>

#include "lltm.h"
#include "runtime/cuda_check.h"
#include "runtime/device.h"

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

// A 2-D tensor (validated) as a matrix.
template <typename T>
Matrix<T> matrix(const lltm_tensor& t) {
  return {static_cast<T*>(t.data), t.sizes[0], t.sizes[1], t.strides[0], t.strides[1]};
}

// Where the products run: the stream, how cuBLAS may round float32
// products, and the cuBLAS handle bound to the stream (null, or absent from
// the build, to use the library's own kernel, which computes exactly).
struct GemmEngine {
  cudaStream_t stream;
  int32_t float32_precision;  // LLTM_MATMUL_PRECISION_*
#if LLTM_HAVE_CUBLAS
  cublasHandle_t blas;
#endif
};

// The device's stream and, unless own_gemm, its cuBLAS handle.
inline GemmEngine gemm_engine(const DeviceState& dev, bool own_gemm, int32_t float32_precision) {
#if LLTM_HAVE_CUBLAS
  return {dev.stream, float32_precision, own_gemm ? nullptr : dev.blas};
#else
  (void)own_gemm;
  return {dev.stream, float32_precision};
#endif
}

// `engine` moved to the device's side stream (runtime/side_work.h), with the cuBLAS handle bound there.
inline GemmEngine side_gemm_engine(const DeviceState& dev, const GemmEngine& engine) {
#if LLTM_HAVE_CUBLAS
  return {dev.side, engine.float32_precision, engine.blas != nullptr ? dev.side_blas : nullptr};
#else
  return {dev.side, engine.float32_precision};
#endif
}

// Whether the engine's products go to cuBLAS.
inline bool uses_blas(const GemmEngine& engine) {
#if LLTM_HAVE_CUBLAS
  return engine.blas != nullptr;
#else
  (void)engine;
  return false;
#endif
}

// C = A B + beta C, with A [M, K], B [K, N], C [M, N]; C is not read when
// beta is 0. K may be 0 (C = beta C).
template <typename T>
void gemm(const GemmEngine& engine, Matrix<const T> A, Matrix<const T> B, Matrix<T> C, T beta);

// Whether products computed in T may take bfloat16 operands with float32
// sums: float32 at LLTM_MATMUL_PRECISION_MEDIUM, which allows bfloat16
// products as torch.set_float32_matmul_precision("medium") does.
template <typename T>
bool half_products(int32_t float32_precision) {
  return std::is_same_v<T, float> && float32_precision == LLTM_MATMUL_PRECISION_MEDIUM;
}
template <typename T>
bool half_products(const GemmEngine& engine) {
  return half_products<T>(engine.float32_precision);
}

// Whether products computed in T may round their operands to TF32: float32
// at LLTM_MATMUL_PRECISION_HIGH or MEDIUM, as PyTorch allows TF32 under
// "high" and "medium".
template <typename T>
bool tf32_products(int32_t float32_precision) {
  return std::is_same_v<T, float> && float32_precision != LLTM_MATMUL_PRECISION_HIGHEST;
}
template <typename T>
bool tf32_products(const GemmEngine& engine) {
  return tf32_products<T>(engine.float32_precision);
}

// A row-major bfloat16 copy of a float32 matrix (any strides), made on
// `stream`: an operand for gemm_widened, which `buffer` holds.
struct Bfloat16Copy {
  std::unique_ptr<Scratch> buffer;
  Matrix<const __nv_bfloat16> m;
};
Bfloat16Copy bfloat16_copy(cudaStream_t stream, Matrix<const float> m);

// gemm of half-type operands into a float32 C (float32 sums, C rounded
// once): the products float32 calls allow at LLTM_MATMUL_PRECISION_MEDIUM,
// reading half the bytes of float32 operands, and the half-type step's
// gates, kept in float32 until their activations.
void gemm_widened(const GemmEngine& engine, Matrix<const __nv_bfloat16> A, Matrix<const __nv_bfloat16> B,
                  Matrix<float> C, float beta);
void gemm_widened(const GemmEngine& engine, Matrix<const __half> A, Matrix<const __half> B, Matrix<float> C,
                  float beta);

// C = A B, or C += A B when accumulate, for operands of any strides. Where
// the engine has cuBLAS, an operand it cannot read in place, or a C it
// cannot write in place, goes through a contiguous copy on the engine's
// stream, as cuBLAS is far faster than the own kernel at large sizes.
template <typename T>
void gemm_any_strides(const GemmEngine& engine, Matrix<const T> A, Matrix<const T> B, Matrix<T> C, bool accumulate);

// out[c] = sum over r of M[r][c] (+ out[c] when accumulate), for the bias gradient.
template <typename T>
void column_sums(cudaStream_t stream, Matrix<const T> M, T* out, int64_t out_stride, bool accumulate);

// A column-major copy of m (each column contiguous), made on `stream` and
// held by `buffer`: a product's right operand contiguous along the depth,
// which TF32 tensor-core products need of one operand at least.
template <typename T>
Matrix<const T> column_major_copy(cudaStream_t stream, Matrix<const T> m, std::unique_ptr<Scratch>& buffer);

}  // namespace lltm::cuda
