// The step on cuBLAS, for large sizes: the products go to cuBLAS (float32
// at the precision the call allows, math/float32_blas.h; float64 exact) and
// small kernels do the rest.
#include "step/cublas.h"

#if LLTM_HAVE_CUBLAS
#include "math/dtype.cuh"
#include "math/float32_blas.h"
#include "math/gemm.h"
#include "math/strided.h"
#include "ops/dtypes.h"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "step/pointwise.cuh"
#include "step/tensors.cuh"

namespace lltm::cuda {

namespace {

// C = op(A) op(B) + beta C
void gemm(cublasHandle_t h, int32_t float32_precision, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
          const float* A, int lda, const float* B, int ldb, float* C, int ldc, float beta = 0) {
  LLTM_CUDA_CHECK(sgemm(h, float32_precision, ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc));
}

void gemm(cublasHandle_t h, int32_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const double* A,
          int lda, const double* B, int ldb, double* C, int ldc, double beta = 0) {
  const double one = 1;
  LLTM_CUDA_CHECK(cublasDgemm(h, ta, tb, m, n, k, &one, A, lda, B, ldb, &beta, C, ldc));
}

// A row-major [rows, cols] tensor as cuBLAS sees it: `data` with leading
// dimension `ld`; `transposed` when it is stored column-major instead.
// Other layouts are copied into `scratch` first.
template <typename T>
struct BlasMatrix {
  const T* data;
  int ld;
  bool transposed;
};

bool row_major(const lltm_tensor& t) { return t.strides[1] == 1 && t.strides[0] >= t.sizes[1]; }
bool column_major(const lltm_tensor& t) { return t.strides[0] == 1 && t.strides[1] >= t.sizes[0]; }

// Scratch for blas_matrix: empty when the tensor can be used in place.
Scratch blas_scratch(const lltm_tensor& t, int32_t dtype) {
  const bool in_place = row_major(t) || column_major(t);
  return Scratch(in_place ? 0 : size_t(numel(t) * dtype_info(dtype)->bytes));
}

template <typename T>
BlasMatrix<T> blas_matrix(const lltm_tensor& t, const Scratch& scratch, int32_t dtype, cudaStream_t stream) {
  if (row_major(t)) return {static_cast<const T*>(t.data), int(t.strides[0]), false};
  if (column_major(t)) return {static_cast<const T*>(t.data), int(t.strides[1]), true};
  strided_copy(contiguous_like(t, scratch.as<void>()), t, dtype, stream);
  return {scratch.as<T>(), int(t.sizes[1]), false};
}
}  // namespace

template <typename T>
void cublas_forward(const ForwardArgs& a, DeviceState& dev, int32_t float32_precision) {
  constexpr int32_t dtype = dtype_of<T>();
  const int64_t B = a.n.batch, S = a.n.state, K = S + a.n.features;
  const ForwardTensors<T> t = forward_tensors<T>(a);
  const int64_t G = 3 * S;
  // X: the output itself when cuBLAS can read it, else a contiguous copy beside it.
  const bool x_direct = is_contiguous(*a.X);
  Scratch x_scratch(x_direct ? 0 : size_t(B * K) * sizeof(T));
  T* Xc = x_direct ? static_cast<T*>(a.X->data) : x_scratch.as<T>();
  launch("cat_kernel", cat_kernel<T>, dim3(grid_blocks(B * K)), dim3(kBlockThreads), 0, dev.stream, t, Xc, !x_direct);
  const Scratch w_scratch = blas_scratch(*a.weights, dtype);
  const BlasMatrix<T> W = blas_matrix<T>(*a.weights, w_scratch, dtype, dev.stream);
  Scratch g_scratch(size_t(B * G) * sizeof(T));
  // Row-major G [B, 3S] is column-major G^T [3S, B] = W [3S, K] . X^T [K, B].
  gemm(dev.blas, float32_precision, W.transposed ? CUBLAS_OP_N : CUBLAS_OP_T, CUBLAS_OP_N, int(G), int(B), int(K),
       W.data, W.ld, Xc, int(K), g_scratch.as<T>(), int(G));
  launch("forward_pointwise", forward_pointwise<T, T>, dim3(grid_blocks(B * S)), dim3(kBlockThreads), 0, dev.stream, t, g_scratch.as<T>());
}

template <typename T>
void cublas_backward(const BackwardArgs& a, DeviceState& dev, int32_t float32_precision) {
  constexpr int32_t dtype = dtype_of<T>();
  const int64_t B = a.n.batch, S = a.n.state, F = a.n.features, K = S + F, G = 3 * S;
  const BackwardTensors<T> t = backward_tensors<T>(a);
  Scratch d_gates(size_t(B * G) * sizeof(T));
  const dim3 pointwise_grid(grid_blocks(G), grid_rows(B));
  launch("backward_pointwise", backward_pointwise<T>, dim3(pointwise_grid), dim3(kBlockThreads), 0, dev.stream, t, d_gates.as<T>());
  // d_bias: dG's column sums, spread over the GPU's blocks in two passes however tall dG is.
  column_sums<T>(dev.stream, row_major<const T>(d_gates.as<T>(), B, G), t.d_bias.data, t.d_bias.stride,
                 a.accumulate);
  const T* dG = d_gates.as<T>();
  const Scratch x_scratch = blas_scratch(*a.X, dtype);
  const BlasMatrix<T> X = blas_matrix<T>(*a.X, x_scratch, dtype, dev.stream);
  const Scratch w_scratch = blas_scratch(*a.weights, dtype);
  const BlasMatrix<T> W = blas_matrix<T>(*a.weights, w_scratch, dtype, dev.stream);

  // Results land in the outputs when they are row-major, else in scratch and
  // then a strided copy (or sum, when accumulating).
  auto product = [&](const lltm_tensor& out, bool accumulate, auto&& compute) {
    if (row_major(out)) {
      compute(static_cast<T*>(out.data), int(out.strides[0]), T(accumulate ? 1 : 0));
      return;
    }
    Scratch staged(size_t(out.sizes[0] * out.sizes[1]) * sizeof(T));
    compute(staged.as<T>(), int(out.sizes[1]), T(0));
    const lltm_tensor c = contiguous_like(out, staged.as<void>());
    if (accumulate)
      strided_axpy(out, 1.0, c, dtype, dev.stream);
    else
      strided_copy(out, c, dtype, dev.stream);
  };
  // d_weights [3S, K] row-major = column-major [K, 3S] = X^T [K, B] . dG [B, 3S].
  product(*a.d_weights, a.accumulate, [&](T* C, int ldc, T beta) {
    gemm(dev.blas, float32_precision, X.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_T, int(K), int(G), int(B),
         X.data, X.ld, dG, int(G), C, ldc, beta);
  });
  // dX [B, K] = dG W; its column blocks are d_old_h (W's first S columns) and d_input.
  // Column-major: d_old_h^T [S, B] = W[:, :S]^T [S, 3S] . dG^T [3S, B].
  auto columns = [&](int64_t first) { return W.transposed ? W.data + first * W.ld : W.data + first; };
  product(*a.d_old_h, false, [&](T* C, int ldc, T) {
    gemm(dev.blas, float32_precision, W.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, int(S), int(B), int(G),
         columns(0), W.ld, dG, int(G), C, ldc);
  });
  product(*a.d_input, false, [&](T* C, int ldc, T) {
    gemm(dev.blas, float32_precision, W.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, int(F), int(B), int(G),
         columns(S), W.ld, dG, int(G), C, ldc);
  });
}

template void cublas_forward<float>(const ForwardArgs&, DeviceState&, int32_t);
template void cublas_forward<double>(const ForwardArgs&, DeviceState&, int32_t);
template void cublas_backward<float>(const BackwardArgs&, DeviceState&, int32_t);
template void cublas_backward<double>(const BackwardArgs&, DeviceState&, int32_t);

}  // namespace lltm::cuda
#endif

#include <string>

namespace lltm::cuda {

void no_cublas(const char* fn) {
#if LLTM_CUBLAS_DYNAMIC
  const std::string why = std::string("cuBLAS was not opened: ") + blas_source();
#else
  const std::string why = "this build of liblltm_cuda has no cuBLAS";
#endif
  fail(LLTM_ERR_BACKEND_UNAVAILABLE, std::string(fn) + ": the cuBLAS path was asked for (LLTM_CUDA_KERNELS=cublas), but " +
                                         why + "; unset LLTM_CUDA_KERNELS, or make cuBLAS available (LLTM_CUBLAS_LIBRARY)");
}

}  // namespace lltm::cuda
