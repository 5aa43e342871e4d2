#include <algorithm>
#include <climits>
#include <memory>

#include "math/dtype.cuh"
#include "math/float32_blas.h"
#include "math/gemm.h"
#include "math/reduce.cuh"
#include "math/strided.h"
#include "math/tensor_core_gemm.h"
#include "runtime/device.h"
#include "runtime/launch.h"

namespace lltm::cuda {

namespace {

// The own scalar kernel (the half types' products go to the tensor cores
// where the device has them, math/tensor_core_gemm.h): a block computes a
// kGemmTile x kGemmTile tile of C, each thread a kGemmMicro x kGemmMicro
// square of it, over kGemmDepth-deep slabs of A and B staged in shared
// memory.
constexpr int kGemmTile = 64;
constexpr int kGemmDepth = 16;
constexpr int kGemmMicro = 4;
constexpr int kGemmSide = kGemmTile / kGemmMicro;  // threads along a tile side
constexpr int kGemmThreads = kGemmSide * kGemmSide;

// Products of the half types accumulate in float (Accumulate<T>), rounded once into C, which is of type T or,
// for a half T, float (gemm_widened).
template <typename T, typename TC = T>
__global__ void __launch_bounds__(kGemmThreads) gemm_kernel(Matrix<const T> A, Matrix<const T> B, Matrix<TC> C,
                                                              TC beta) {
  using Acc = Accumulate<T>;
  __shared__ Acc As[kGemmDepth][kGemmTile + 1];
  __shared__ Acc Bs[kGemmDepth][kGemmTile + 1];
  const Acc beta_acc = widen(beta);
  const int64_t M = C.rows, N = C.cols, K = A.cols;
  const int64_t tiles_n = (N + kGemmTile - 1) / kGemmTile;
  const int64_t tiles = (M + kGemmTile - 1) / kGemmTile * tiles_n;
  const int tx = threadIdx.x % kGemmSide, ty = threadIdx.x / kGemmSide;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t m0 = tile / tiles_n * kGemmTile, n0 = tile % tiles_n * kGemmTile;
    Acc acc[kGemmMicro][kGemmMicro] = {};
    for (int64_t k0 = 0; k0 < K; k0 += kGemmDepth) {
      for (int e = threadIdx.x; e < kGemmDepth * kGemmTile; e += kGemmThreads) {
        const int kk = e % kGemmDepth, i = e / kGemmDepth;
        const int64_t k = k0 + kk, m = m0 + i, n = n0 + i;
        As[kk][i] = m < M && k < K ? widen(A.data[m * A.rs + k * A.cs]) : Acc(0);
        Bs[kk][i] = n < N && k < K ? widen(B.data[k * B.rs + n * B.cs]) : Acc(0);
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kGemmDepth; ++kk) {
        Acc a[kGemmMicro], b[kGemmMicro];
#pragma unroll
        for (int i = 0; i < kGemmMicro; ++i) a[i] = As[kk][ty + i * kGemmSide];
#pragma unroll
        for (int j = 0; j < kGemmMicro; ++j) b[j] = Bs[kk][tx + j * kGemmSide];
#pragma unroll
        for (int i = 0; i < kGemmMicro; ++i)
#pragma unroll
          for (int j = 0; j < kGemmMicro; ++j) acc[i][j] += a[i] * b[j];
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < kGemmMicro; ++i)
#pragma unroll
      for (int j = 0; j < kGemmMicro; ++j) {
        const int64_t m = m0 + ty + i * kGemmSide, n = n0 + tx + j * kGemmSide;
        if (m < M && n < N) {
          TC& c = C.data[m * C.rs + n * C.cs];
          c = RoundTo<TC>::from(beta_acc == Acc(0) ? acc[i][j] : acc[i][j] + beta_acc * widen(c));
        }
      }
  }
}

template <typename T, typename TC>
void own_gemm(cudaStream_t stream, Matrix<const T> A, Matrix<const T> B, Matrix<TC> C, TC beta) {
  if constexpr (std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>) {
    if (tensor_core_gemm(stream, A, B, C, beta)) return;
  }
  const int64_t tiles = (C.rows + kGemmTile - 1) / kGemmTile * ((C.cols + kGemmTile - 1) / kGemmTile);
  launch("gemm_kernel", gemm_kernel<T, TC>, dim3(unsigned(std::min(tiles, kMaxGridBlocks))),
         dim3(kGemmThreads), 0, stream, A, B, C, beta);
}

// A matrix as a 2-D tensor descriptor, for the strided copies.
template <typename T>
lltm_tensor tensor_of(Matrix<T> m) {
  return {const_cast<std::remove_const_t<T>*>(m.data), 2, {m.rows, m.cols, 1, 1}, {m.rs, m.cs, 0, 0},
          dtype_of<std::remove_const_t<T>>()};
}

#if LLTM_HAVE_CUBLAS
// A stride that never multiplies a nonzero index is free: give it the value BLAS wants.
template <typename T>
Matrix<T> normalized(Matrix<T> m) {
  if (m.rows == 1) m.rs = m.cols;
  if (m.cols == 1) m.cs = m.rows;
  return m;
}

// How cuBLAS (column-major) reads a matrix: as is with leading dimension ld,
// or transposed; false when neither fits.
template <typename T>
bool blas_layout(Matrix<T> m, cublasOperation_t& op, int& ld) {
  if (m.rows > INT_MAX || m.cols > INT_MAX) return false;
  if (m.rs == 1 && m.cs >= m.rows && m.cs >= 1 && m.cs <= INT_MAX) {
    op = CUBLAS_OP_N;
    ld = int(m.cs);
    return true;
  }
  if (m.cs == 1 && m.rs >= m.cols && m.rs >= 1 && m.rs <= INT_MAX) {
    op = CUBLAS_OP_T;
    ld = int(m.rs);
    return true;
  }
  return false;
}

cublasStatus_t blas_gemm(cublasHandle_t h, int32_t float32_precision, cublasOperation_t ta, cublasOperation_t tb,
                         int m, int n, int k, const float* A, int lda, const float* B, int ldb, float beta, float* C,
                         int ldc) {
  return sgemm(h, float32_precision, ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc);
}

// Float64 products are exact at every precision, as PyTorch's.
cublasStatus_t blas_gemm(cublasHandle_t h, int32_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                         const double* A, int lda, const double* B, int ldb, double beta, double* C, int ldc) {
  const double one = 1;
  return cublasDgemm(h, ta, tb, m, n, k, &one, A, lda, B, ldb, &beta, C, ldc);
}

// The half types: their own storage in A, B and C, float32 accumulation.
template <typename T>
cublasStatus_t half_gemm(cublasHandle_t h, cudaDataType type, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                         int k, const T* A, int lda, const T* B, int ldb, T beta, T* C, int ldc) {
  const float one = 1, beta_f = widen(beta);
  return cublasGemmEx(h, ta, tb, m, n, k, &one, A, type, lda, B, type, ldb, &beta_f, C, type, ldc, CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT);
}

cublasStatus_t blas_gemm(cublasHandle_t h, int32_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                         const __nv_bfloat16* A, int lda, const __nv_bfloat16* B, int ldb, __nv_bfloat16 beta,
                         __nv_bfloat16* C, int ldc) {
  return half_gemm(h, CUDA_R_16BF, ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t blas_gemm(cublasHandle_t h, int32_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                         const __half* A, int lda, const __half* B, int ldb, __half beta, __half* C, int ldc) {
  return half_gemm(h, CUDA_R_16F, ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc);
}

// Half-type operands, a float32 C.
template <typename T>
cublasStatus_t widened_gemm(cublasHandle_t h, cudaDataType type, cublasOperation_t ta, cublasOperation_t tb, int m,
                            int n, int k, const T* A, int lda, const T* B, int ldb, float beta, float* C, int ldc) {
  const float one = 1;
  return cublasGemmEx(h, ta, tb, m, n, k, &one, A, type, lda, B, type, ldb, &beta, C, CUDA_R_32F, ldc,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

cublasStatus_t blas_gemm(cublasHandle_t h, int32_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                         const __nv_bfloat16* A, int lda, const __nv_bfloat16* B, int ldb, float beta, float* C,
                         int ldc) {
  return widened_gemm(h, CUDA_R_16BF, ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t blas_gemm(cublasHandle_t h, int32_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                         const __half* A, int lda, const __half* B, int ldb, float beta, float* C, int ldc) {
  return widened_gemm(h, CUDA_R_16F, ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc);
}

// C = A B + beta C through cuBLAS; false (nothing launched) when a layout does not fit it.
template <typename T, typename TC>
bool try_blas(cublasHandle_t h, int32_t float32_precision, Matrix<const T> A, Matrix<const T> B, Matrix<TC> C,
              TC beta) {
  A = normalized(A);
  B = normalized(B);
  C = normalized(C);
  // cuBLAS writes C column-major; a row-major C is C^T = B^T A^T column-major.
  if (!(C.rs == 1 && C.cs >= C.rows)) {
    const Matrix<const T> At = A.transposed();
    A = B.transposed();
    B = At;
    C = C.transposed();
  }
  cublasOperation_t ta, tb, tc;
  int lda, ldb, ldc;
  if (!blas_layout(A, ta, lda) || !blas_layout(B, tb, ldb) || !blas_layout(C, tc, ldc) || tc != CUBLAS_OP_N ||
      A.cols > INT_MAX)
    return false;
  check(blas_gemm(h, float32_precision, ta, tb, int(C.rows), int(C.cols), int(A.cols), A.data, lda, B.data, ldb, beta,
                  C.data, ldc),
        "cublas gemm");
  return true;
}

// Whether cuBLAS reads (or writes) the matrix in place: column- or row-major
// with a leading dimension within int.
template <typename T>
bool blas_ready(Matrix<T> m) {
  cublasOperation_t op;
  int ld;
  return blas_layout(normalized(m), op, ld);
}

// The matrix itself where cuBLAS reads it in place, else a row-major copy held by `copy`.
template <typename T>
Matrix<const T> blas_operand(cudaStream_t stream, Matrix<const T> m, std::unique_ptr<Scratch>& copy) {
  if (blas_ready(m)) return m;
  copy = std::make_unique<Scratch>(size_t(m.rows * m.cols) * sizeof(T));
  const Matrix<const T> staged = row_major<const T>(copy->template as<T>(), m.rows, m.cols);
  strided_copy(tensor_of(staged), tensor_of(m), dtype_of<T>(), stream);
  return staged;
}
#endif

// Column sums in two passes, so that tall matrices (T * B rows) spread over
// the whole GPU: a block sums kSumColumns columns of one chunk of
// kSumChunkRows rows into a partial row, its kSumSlices thread rows taking
// every kSumSlices-th row and then adding up in a fixed order; a second
// pass sums the partial rows the same way. Results do not vary between runs.
constexpr int kSumColumns = 32;
constexpr int kSumSlices = 8;
constexpr int64_t kSumChunkRows = 256;

// out[chunk * out_chunk_stride + c * out_stride] (+)= sum of M's rows in chunk blockIdx.y, column c.
template <typename T>
__global__ void __launch_bounds__(kSumColumns* kSumSlices)
    column_sums_kernel(Matrix<const T> M, int64_t chunk_rows, T* out, int64_t out_chunk_stride, int64_t out_stride,
                       bool accumulate) {
  using Acc = Accumulate<T>;
  __shared__ Acc partial[kSumSlices][kSumColumns];
  const int lane = threadIdx.x % kSumColumns, slice = threadIdx.x / kSumColumns;
  const int64_t r0 = blockIdx.y * chunk_rows, r1 = min(M.rows, r0 + chunk_rows);
  for (int64_t c0 = int64_t(blockIdx.x) * kSumColumns; c0 < M.cols; c0 += int64_t(gridDim.x) * kSumColumns) {
    const int64_t c = c0 + lane;
    Acc sum = 0;
    if (c < M.cols) {
#pragma unroll 8
      for (int64_t r = r0 + slice; r < r1; r += kSumSlices) sum += widen(M.data[r * M.rs + c * M.cs]);
    }
    partial[slice][lane] = sum;
    __syncthreads();
    if (slice == 0 && c < M.cols) {
      Acc total = 0;
      for (int s = 0; s < kSumSlices; ++s) total += partial[s][lane];
      T& o = out[blockIdx.y * out_chunk_stride + c * out_stride];
      o = RoundTo<T>::from(accumulate ? widen(o) + total : total);
    }
    __syncthreads();
  }
}

template <typename T>
void column_sums_pass(cudaStream_t stream, Matrix<const T> M, int64_t chunk_rows, T* out, int64_t out_chunk_stride,
                      int64_t out_stride, bool accumulate) {
  const int64_t tiles = (M.cols + kSumColumns - 1) / kSumColumns, chunks = (M.rows + chunk_rows - 1) / chunk_rows;
  launch("column_sums_kernel", column_sums_kernel<T>, dim3(unsigned(std::min(tiles, kMaxGridBlocks)), unsigned(chunks)),
         dim3(kSumColumns * kSumSlices), 0, stream, M, chunk_rows, out, out_chunk_stride, out_stride, accumulate);
}

// Column sums of a matrix whose columns are contiguous (rs == 1, such as the
// sequence backward's gate-major dG): a block per column, its threads taking
// rows threadIdx.x, threadIdx.x + kBlockThreads, ... in batches of loads, each
// warp's sums added by a butterfly and the warps' totals in warp order.
template <typename T>
__global__ void contiguous_column_sums_kernel(Matrix<const T> M, T* out, int64_t out_stride, bool accumulate) {
  using Acc = Accumulate<T>;
  __shared__ Acc warp_totals[kBlockThreads / 32];
  for (int64_t c = blockIdx.x; c < M.cols; c += gridDim.x) {
    const T* column = M.data + c * M.cs;
    const Acc part =
        warp_sum(strided_sum<Acc>(threadIdx.x, M.rows, kBlockThreads, [&](int64_t r) { return widen(column[r]); }));
    if (threadIdx.x % 32 == 0) warp_totals[threadIdx.x / 32] = part;
    __syncthreads();
    if (threadIdx.x == 0) {
      Acc total = 0;
      for (int w = 0; w < kBlockThreads / 32; ++w) total += warp_totals[w];
      T& o = out[c * out_stride];
      o = RoundTo<T>::from(accumulate ? widen(o) + total : total);
    }
    __syncthreads();
  }
}

// dst[c * rows + r] = src[r * src_rs + c]: a row-major matrix copied
// column-major through 32 x 32 tiles in shared memory, so that both the
// reads and the writes are of consecutive elements.
constexpr int kTransposeTile = 32;
template <typename T>
__global__ void transpose_kernel(const T* src, int64_t rows, int64_t cols, int64_t src_rs, T* dst) {
  __shared__ T tile[kTransposeTile][kTransposeTile + 1];
  const int64_t tile_rows = (rows + kTransposeTile - 1) / kTransposeTile;
  const int64_t tiles = tile_rows * ((cols + kTransposeTile - 1) / kTransposeTile);
  const int x = threadIdx.x % kTransposeTile, y0 = threadIdx.x / kTransposeTile;
  constexpr int kStep = kBlockThreads / kTransposeTile;
  for (int64_t tile_at = blockIdx.x; tile_at < tiles; tile_at += gridDim.x) {
    const int64_t r0 = tile_at % tile_rows * kTransposeTile, c0 = tile_at / tile_rows * kTransposeTile;
    for (int y = y0; y < kTransposeTile; y += kStep)
      if (r0 + y < rows && c0 + x < cols) tile[y][x] = src[(r0 + y) * src_rs + c0 + x];
    __syncthreads();
    for (int y = y0; y < kTransposeTile; y += kStep)
      if (c0 + y < cols && r0 + x < rows) dst[(c0 + y) * rows + r0 + x] = tile[x][y];
    __syncthreads();
  }
}

// A product this shallow and small (one slab of the own kernel, such as an
// input projection of a few features) is one short launch of the own kernel,
// where cuBLAS takes two.
template <typename T>
bool small_product(const Matrix<const T>& A, const Matrix<T>& C) {
  constexpr int64_t kMaxWork = int64_t(1) << 20;
  return A.cols <= kGemmDepth && C.rows * C.cols <= kMaxWork / std::max<int64_t>(A.cols, 1);
}

}  // namespace

template <typename T>
void gemm(const GemmEngine& engine, Matrix<const T> A, Matrix<const T> B, Matrix<T> C, T beta) {
  if (C.rows == 0 || C.cols == 0) return;
#if LLTM_HAVE_CUBLAS
  if (engine.blas != nullptr && !small_product(A, C) &&
      try_blas(engine.blas, engine.float32_precision, A, B, C, beta))
    return;
#endif
  own_gemm(engine.stream, A, B, C, beta);
}

Bfloat16Copy bfloat16_copy(cudaStream_t stream, Matrix<const float> m) {
  Bfloat16Copy c{std::make_unique<Scratch>(size_t(m.rows * m.cols) * sizeof(__nv_bfloat16)), {}};
  c.m = row_major<const __nv_bfloat16>(c.buffer->as<__nv_bfloat16>(), m.rows, m.cols);
  strided_convert(tensor_of(c.m), tensor_of(m), stream);
  return c;
}

namespace {

template <typename T>
void widened(const GemmEngine& engine, Matrix<const T> A, Matrix<const T> B, Matrix<float> C, float beta) {
  if (C.rows == 0 || C.cols == 0) return;
#if LLTM_HAVE_CUBLAS
  if (engine.blas != nullptr && try_blas(engine.blas, engine.float32_precision, A, B, C, beta)) return;
#endif
  own_gemm(engine.stream, A, B, C, beta);
}

}  // namespace

void gemm_widened(const GemmEngine& engine, Matrix<const __nv_bfloat16> A, Matrix<const __nv_bfloat16> B,
                  Matrix<float> C, float beta) {
  widened(engine, A, B, C, beta);
}

void gemm_widened(const GemmEngine& engine, Matrix<const __half> A, Matrix<const __half> B, Matrix<float> C,
                  float beta) {
  widened(engine, A, B, C, beta);
}

template <typename T>
void gemm_any_strides(const GemmEngine& engine, Matrix<const T> A, Matrix<const T> B, Matrix<T> C, bool accumulate) {
  if (C.rows == 0 || C.cols == 0) return;
#if LLTM_HAVE_CUBLAS
  // Sizes past int stay with the own kernel, which a copy would not change.
  const bool sizes_fit = C.rows <= INT_MAX && C.cols <= INT_MAX && A.cols <= INT_MAX;
  if (engine.blas != nullptr && sizes_fit) {
    std::unique_ptr<Scratch> a_copy, b_copy;
    A = blas_operand(engine.stream, A, a_copy);
    B = blas_operand(engine.stream, B, b_copy);
    if (!blas_ready(C)) {
      Scratch staged(size_t(C.rows * C.cols) * sizeof(T));
      const Matrix<T> Cs = row_major(staged.as<T>(), C.rows, C.cols);
      if (accumulate) strided_copy(tensor_of(Cs), tensor_of(C), dtype_of<T>(), engine.stream);
      gemm(engine, A, B, Cs, RoundTo<T>::from(accumulate ? 1.0f : 0.0f));
      strided_copy(tensor_of(C), tensor_of(Cs), dtype_of<T>(), engine.stream);
      return;
    }
  }
#endif
  gemm(engine, A, B, C, RoundTo<T>::from(accumulate ? 1.0f : 0.0f));
}

template <typename T>
void column_sums(cudaStream_t stream, Matrix<const T> M, T* out, int64_t out_stride, bool accumulate) {
  if (M.rs == 1 && M.cols > 1)
    return launch("contiguous_column_sums_kernel", contiguous_column_sums_kernel<T>,
                  dim3(unsigned(std::min(M.cols, kMaxGridBlocks))), dim3(kBlockThreads), 0, stream, M, out, out_stride,
                  accumulate);
  // Chunks within a grid's kMaxGridRows rows of blocks.
  const int64_t chunk_rows = std::max(kSumChunkRows, (M.rows + kMaxGridRows - 1) / kMaxGridRows);
  const int64_t chunks = (M.rows + chunk_rows - 1) / chunk_rows;
  if (chunks <= 1) return column_sums_pass(stream, M, M.rows, out, 0, out_stride, accumulate);
  Scratch partial(size_t(chunks * M.cols) * sizeof(T));
  column_sums_pass(stream, M, chunk_rows, partial.as<T>(), M.cols, int64_t(1), false);
  column_sums_pass(stream, row_major<const T>(partial.as<T>(), chunks, M.cols), chunks, out, 0, out_stride,
                   accumulate);
}

template <typename T>
Matrix<const T> column_major_copy(cudaStream_t stream, Matrix<const T> m, std::unique_ptr<Scratch>& buffer) {
  buffer = std::make_unique<Scratch>(size_t(m.rows * m.cols) * sizeof(T));
  const Matrix<const T> copy{buffer->template as<T>(), m.rows, m.cols, 1, m.rows};
  if (m.cs != 1) {
    strided_copy(tensor_of(copy), tensor_of(m), dtype_of<T>(), stream);
    return copy;
  }
  const int64_t tiles =
      ((m.rows + kTransposeTile - 1) / kTransposeTile) * ((m.cols + kTransposeTile - 1) / kTransposeTile);
  launch("transpose_kernel", transpose_kernel<T>, dim3(unsigned(std::min(tiles, kMaxGridBlocks))), dim3(kBlockThreads),
         0, stream, m.data, m.rows, m.cols, m.rs, buffer->template as<T>());
  return copy;
}

#define LLTM_GEMM_INSTANTIATE(T)                                                                              \
  template void gemm<T>(const GemmEngine&, Matrix<const T>, Matrix<const T>, Matrix<T>, T);                   \
  template void gemm_any_strides<T>(const GemmEngine&, Matrix<const T>, Matrix<const T>, Matrix<T>, bool);    \
  template void column_sums<T>(cudaStream_t, Matrix<const T>, T*, int64_t, bool);                             \
  template Matrix<const T> column_major_copy<T>(cudaStream_t, Matrix<const T>, std::unique_ptr<Scratch>&);
LLTM_GEMM_INSTANTIATE(float)
LLTM_GEMM_INSTANTIATE(double)
LLTM_GEMM_INSTANTIATE(__nv_bfloat16)
LLTM_GEMM_INSTANTIATE(__half)
#undef LLTM_GEMM_INSTANTIATE

}  // namespace lltm::cuda
