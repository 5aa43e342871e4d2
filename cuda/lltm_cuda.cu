// The LLTM cell on CUDA. Two ways to run each pass, chosen by size:
//  - fused: for small sizes, where launches dominate, one kernel does the
//    forward pass (cat, GEMM, bias, activations) and two do the backward
//    (pointwise, then both products and the bias sum);
//  - cuBLAS: for large sizes, the products go to cuBLAS (SGEMM/DGEMM, no
//    reduced precision) and fused kernels do the rest.
// All math runs in the kernel's own type: double stays double throughout.
#include <cstdlib>
#include <cstring>

#include "accessor.h"
#include "device.h"
#include "dispatch.h"
#include "lltm_cuda.h"
#include "strided.h"

#ifndef LLTM_HAVE_CUBLAS
#define LLTM_HAVE_CUBLAS 0
#endif

namespace lltm::cuda {

namespace {

__device__ __forceinline__ float exp_of(float x) { return expf(x); }
__device__ __forceinline__ double exp_of(double x) { return exp(x); }
__device__ __forceinline__ float expm1_of(float x) { return expm1f(x); }
__device__ __forceinline__ double expm1_of(double x) { return expm1(x); }
__device__ __forceinline__ float tanh_of(float x) { return tanhf(x); }
__device__ __forceinline__ double tanh_of(double x) { return tanh(x); }

template <typename T>
__device__ __forceinline__ T sigmoid(T x) {
  return T(1) / (T(1) + exp_of(-x));
}

template <typename T>
struct ForwardTensors {
  Accessor<const T, 2> input, weights, old_h, old_cell;
  Accessor<const T, 1> bias;
  Accessor<T, 2> new_h, new_cell, input_gate, output_gate, candidate_cell, X, gates;
  int B, F, S;
};

template <typename T>
struct BackwardTensors {
  Accessor<const T, 2> grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, X, gates, weights;
  Accessor<T, 2> d_old_h, d_input, d_weights, d_old_cell;
  Accessor<T, 1> d_bias;
  int B, F, S;
};

// The epilogue of the forward pass for one (b, s): g* include the bias.
template <typename T>
__device__ __forceinline__ void write_cell(const ForwardTensors<T>& t, int b, int s, T g0, T g1, T g2) {
  t.gates[b][s] = g0;
  t.gates[b][t.S + s] = g1;
  t.gates[b][2 * t.S + s] = g2;
  const T i = sigmoid(g0), o = sigmoid(g1);
  const T z = g2 > T(0) ? g2 : expm1_of(g2);
  const T cell = t.old_cell[b][s] + z * i;
  t.input_gate[b][s] = i;
  t.output_gate[b][s] = o;
  t.candidate_cell[b][s] = z;
  t.new_cell[b][s] = cell;
  t.new_h[b][s] = tanh_of(cell) * o;
}

constexpr int kTile = 16;   // output tile: 16 x 16 threads
constexpr int kChunk = 64;  // reduction elements staged per step (several loads in flight per thread)

constexpr int kThreads = kTile * kTile;
constexpr int kPerThread = kChunk * kTile / kThreads;  // elements of a [kChunk x kTile] stage per thread

template <typename T>
__global__ void __launch_bounds__(kThreads) forward_fused(ForwardTensors<T> t) {
  __shared__ T xs[kTile][kChunk + 1];
  __shared__ T ws[3][kTile][kChunk + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTile + tx;
  const int s0 = blockIdx.x * kTile, b0 = blockIdx.y * kTile;
  const int K = t.S + t.F;
  T acc0 = 0, acc1 = 0, acc2 = 0;
  for (int k0 = 0; k0 < K; k0 += kChunk) {
    // All of a stage's loads are issued before any is used, so their latencies overlap.
    T xv[kPerThread], wv[3][kPerThread];
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int e = tid + j * kThreads, r = e / kChunk, c = e % kChunk, k = k0 + c;
      const int b = b0 + r, s = s0 + r;
      xv[j] = (b < t.B && k < K) ? (k < t.S ? t.old_h[b][k] : t.input[b][k - t.S]) : T(0);
#pragma unroll
      for (int g = 0; g < 3; ++g) wv[g][j] = (s < t.S && k < K) ? t.weights[g * t.S + s][k] : T(0);
    }
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int e = tid + j * kThreads, r = e / kChunk, c = e % kChunk;
      xs[r][c] = xv[j];
#pragma unroll
      for (int g = 0; g < 3; ++g) ws[g][r][c] = wv[g][j];
      const int b = b0 + r, k = k0 + c;
      if (blockIdx.x == 0 && b < t.B && k < K) t.X[b][k] = xv[j];
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < kChunk; ++kk) {
      const T x = xs[ty][kk];
      acc0 += x * ws[0][tx][kk];
      acc1 += x * ws[1][tx][kk];
      acc2 += x * ws[2][tx][kk];
    }
    __syncthreads();
  }
  const int b = b0 + ty, s = s0 + tx;
  if (b < t.B && s < t.S)
    write_cell(t, b, s, acc0 + t.bias[s], acc1 + t.bias[t.S + s], acc2 + t.bias[2 * t.S + s]);
}

// X = cat(old_h, input) into a contiguous buffer (and into the X output when that is another buffer).
template <typename T>
__global__ void cat_kernel(ForwardTensors<T> t, T* Xc, bool also_output) {
  const int K = t.S + t.F;
  const int64_t n = int64_t(t.B) * K;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int b = int(e / K), k = int(e % K);
    const T v = k < t.S ? t.old_h[b][k] : t.input[b][k - t.S];
    Xc[e] = v;
    if (also_output) t.X[b][k] = v;
  }
}

// Bias and activations after the cuBLAS product Gc = X W^T (contiguous [B, 3S]).
template <typename T>
__global__ void forward_pointwise(ForwardTensors<T> t, const T* Gc) {
  const int64_t n = int64_t(t.B) * t.S;
  const int G = 3 * t.S;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int b = int(e / t.S), s = int(e % t.S);
    const T* g = Gc + int64_t(b) * G;
    write_cell(t, b, s, g[s] + t.bias[s], g[t.S + s] + t.bias[t.S + s], g[2 * t.S + s] + t.bias[2 * t.S + s]);
  }
}

// Gradient of the loss with respect to gate n (before its activation) of batch row b.
template <typename T>
__device__ __forceinline__ T gate_gradient(const BackwardTensors<T>& t, int b, int n) {
  const int gate = n / t.S, s = n % t.S;
  const T grad_h = t.grad_h[b][s], o = t.output_gate[b][s];
  const T th = tanh_of(t.new_cell[b][s]);
  if (gate == 1) return th * grad_h * o * (T(1) - o);
  const T i = t.input_gate[b][s];
  const T d_cell = (T(1) - th * th) * o * grad_h + t.grad_cell[b][s];
  if (gate == 0) return t.candidate_cell[b][s] * d_cell * i * (T(1) - i);
  const T g2 = t.gates[b][2 * t.S + s];
  return i * d_cell * (g2 > T(0) ? T(1) : exp_of(g2));
}

template <typename T>
__device__ __forceinline__ T cell_gradient(const BackwardTensors<T>& t, int b, int s) {
  const T th = tanh_of(t.new_cell[b][s]);
  return (T(1) - th * th) * t.output_gate[b][s] * t.grad_h[b][s] + t.grad_cell[b][s];
}

// dG into a contiguous [B, 3S] buffer, and d_old_cell.
template <typename T>
__global__ void backward_pointwise(BackwardTensors<T> t, T* dG) {
  const int G = 3 * t.S;
  const int64_t n = int64_t(t.B) * G;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int b = int(e / G), g = int(e % G);
    dG[e] = gate_gradient(t, b, g);
    if (g < t.S) t.d_old_cell[b][g] = cell_gradient(t, b, g);
  }
}

// Both products of the backward pass and the bias sum, in one launch for
// small sizes. Blocks [0, w_tiles) compute 16x16 tiles of d_weights = dG^T X
// (and d_bias, in the first column of tiles); the others tiles of
// dX = dG W, written to d_old_h and d_input.
template <typename T>
__global__ void __launch_bounds__(kThreads) backward_products(BackwardTensors<T> t, const T* dG, int k_tiles) {
  __shared__ T as[kChunk][kTile + 1];
  __shared__ T bs[kChunk][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTile + tx;
  const int G = 3 * t.S, K = t.S + t.F;
  const int w_tiles = ((G + kTile - 1) / kTile) * k_tiles;
  int tile = blockIdx.x;
  const bool weights_tile = tile < w_tiles;
  if (!weights_tile) tile -= w_tiles;
  const int i0 = (tile / k_tiles) * kTile, k0 = (tile % k_tiles) * kTile;
  // Rows i are n (d_weights) or b (dX); the reduction runs over b or n.
  const int rows = weights_tile ? G : t.B, depth = weights_tile ? t.B : G;
  T acc = 0, bias = 0;
  for (int p0 = 0; p0 < depth; p0 += kChunk) {
    // All of a stage's loads are issued before any is used, so their latencies overlap.
    T av[kPerThread], bv[kPerThread];
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int e = tid + j * kThreads, p = p0 + e / kTile, c = e % kTile, i = i0 + c, k = k0 + c;
      // A(i, p) = dG[p][i] for d_weights, dG[i][p] for dX.
      av[j] = p < depth && i < rows ? dG[weights_tile ? int64_t(p) * G + i : int64_t(i) * G + p] : T(0);
      bv[j] = p < depth && k < K ? (weights_tile ? t.X[p][k] : t.weights[p][k]) : T(0);
    }
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int e = tid + j * kThreads;
      as[e / kTile][e % kTile] = av[j];
      bs[e / kTile][e % kTile] = bv[j];
    }
    __syncthreads();
#pragma unroll 8
    for (int p = 0; p < kChunk; ++p) {
      acc += as[p][ty] * bs[p][tx];
      bias += as[p][ty];
    }
    __syncthreads();
  }
  const int i = i0 + ty, k = k0 + tx;
  if (i >= rows || k >= K) return;
  if (weights_tile) {
    t.d_weights[i][k] = acc;
    if (k0 == 0 && tx == 0) t.d_bias[i] = bias;
  } else if (k < t.S) {
    t.d_old_h[i][k] = acc;
  } else {
    t.d_input[i][k - t.S] = acc;
  }
}

// d_bias[n] = sum over b of dG[b][n].
template <typename T>
__global__ void bias_sum(BackwardTensors<T> t, const T* dG) {
  const int G = 3 * t.S;
  for (int n = blockIdx.x * blockDim.x + threadIdx.x; n < G; n += gridDim.x * blockDim.x) {
    T sum = 0;
    for (int b = 0; b < t.B; ++b) sum += dG[int64_t(b) * G + n];
    t.d_bias[n] = sum;
  }
}


// Small sizes take the fused kernels; LLTM_CUDA_KERNELS=fused|cublas forces a path.
bool use_cublas(int64_t B, int64_t S, int64_t K) {
  if (!LLTM_HAVE_CUBLAS) return false;
  static const char* forced = std::getenv("LLTM_CUDA_KERNELS");
  if (forced && std::strcmp(forced, "fused") == 0) return false;
  if (forced && std::strcmp(forced, "cublas") == 0) return true;
  return double(B) * 3 * S * K > double(1 << 23);
}

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return unsigned(b < 4096 ? b : 4096);
}

#if LLTM_HAVE_CUBLAS
// ---- cuBLAS helpers (column-major) ----

void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* A, int lda,
          const float* B, int ldb, float* C, int ldc) {
  const float one = 1, zero = 0;
  LLTM_CUDA_CHECK(cublasSgemm(h, ta, tb, m, n, k, &one, A, lda, B, ldb, &zero, C, ldc));
}

void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const double* A, int lda,
          const double* B, int ldb, double* C, int ldc) {
  const double one = 1, zero = 0;
  LLTM_CUDA_CHECK(cublasDgemm(h, ta, tb, m, n, k, &one, A, lda, B, ldb, &zero, C, ldc));
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
Scratch blas_scratch(const lltm_tensor& t, int32_t dtype, cudaStream_t stream) {
  const bool in_place = row_major(t) || column_major(t);
  return Scratch(in_place ? 0 : size_t(numel(t) * element_size(dtype)), stream);
}

template <typename T>
BlasMatrix<T> blas_matrix(const lltm_tensor& t, const Scratch& scratch, int32_t dtype, cudaStream_t stream) {
  if (row_major(t)) return {static_cast<const T*>(t.data), int(t.strides[0]), false};
  if (column_major(t)) return {static_cast<const T*>(t.data), int(t.strides[1]), true};
  strided_copy(contiguous_like(t, scratch.as<void>()), t, dtype, stream);
  return {scratch.as<T>(), int(t.sizes[1]), false};
}
#endif

template <typename T>
ForwardTensors<T> forward_tensors(const ForwardArgs& a) {
  return {accessor<const T, 2>(*a.input),    accessor<const T, 2>(*a.weights),    accessor<const T, 2>(*a.old_h),
          accessor<const T, 2>(*a.old_cell), accessor1<const T>(*a.bias),         accessor<T, 2>(*a.new_h),
          accessor<T, 2>(*a.new_cell),       accessor<T, 2>(*a.input_gate),       accessor<T, 2>(*a.output_gate),
          accessor<T, 2>(*a.candidate_cell), accessor<T, 2>(*a.X),                accessor<T, 2>(*a.gate_weights),
          int(a.n.batch),                    int(a.n.features),                   int(a.n.state)};
}

template <typename T>
BackwardTensors<T> backward_tensors(const BackwardArgs& a) {
  return {accessor<const T, 2>(*a.grad_h),      accessor<const T, 2>(*a.grad_cell),
          accessor<const T, 2>(*a.new_cell),    accessor<const T, 2>(*a.input_gate),
          accessor<const T, 2>(*a.output_gate), accessor<const T, 2>(*a.candidate_cell),
          accessor<const T, 2>(*a.X),           accessor<const T, 2>(*a.gate_weights),
          accessor<const T, 2>(*a.weights),     accessor<T, 2>(*a.d_old_h),
          accessor<T, 2>(*a.d_input),           accessor<T, 2>(*a.d_weights),
          accessor<T, 2>(*a.d_old_cell),        accessor1<T>(*a.d_bias),
          int(a.n.batch),                       int(a.n.features),
          int(a.n.state)};
}

template <typename T>
void forward(const ForwardArgs& a, int32_t dtype, DeviceState& dev) {
  const ForwardTensors<T> t = forward_tensors<T>(a);
  const int64_t B = a.n.batch, S = a.n.state, K = S + a.n.features;
  if (!use_cublas(B, S, K)) {
    const dim3 grid(unsigned((S + kTile - 1) / kTile), unsigned((B + kTile - 1) / kTile));
    forward_fused<T><<<grid, dim3(kTile, kTile), 0, dev.stream>>>(t);
    LLTM_LAUNCH_CHECK("forward_fused");
    return;
  }
#if LLTM_HAVE_CUBLAS
  const int64_t G = 3 * S;
  // X: the output itself when cuBLAS can read it, else a contiguous copy beside it.
  const bool x_direct = is_contiguous(*a.X);
  Scratch x_scratch(x_direct ? 0 : size_t(B * K) * sizeof(T), dev.stream);
  T* Xc = x_direct ? static_cast<T*>(a.X->data) : x_scratch.as<T>();
  cat_kernel<T><<<blocks_for(B * K), 256, 0, dev.stream>>>(t, Xc, !x_direct);
  LLTM_LAUNCH_CHECK("cat_kernel");
  const Scratch w_scratch = blas_scratch(*a.weights, dtype, dev.stream);
  const BlasMatrix<T> W = blas_matrix<T>(*a.weights, w_scratch, dtype, dev.stream);
  Scratch g_scratch(size_t(B * G) * sizeof(T), dev.stream);
  // Row-major G [B, 3S] is column-major G^T [3S, B] = W [3S, K] . X^T [K, B].
  gemm(dev.blas, W.transposed ? CUBLAS_OP_N : CUBLAS_OP_T, CUBLAS_OP_N, int(G), int(B), int(K), W.data, W.ld, Xc,
       int(K), g_scratch.as<T>(), int(G));
  forward_pointwise<T><<<blocks_for(B * S), 256, 0, dev.stream>>>(t, g_scratch.as<T>());
  LLTM_LAUNCH_CHECK("forward_pointwise");
#endif
}

template <typename T>
void backward(const BackwardArgs& a, int32_t dtype, DeviceState& dev) {
  const BackwardTensors<T> t = backward_tensors<T>(a);
  const int64_t B = a.n.batch, S = a.n.state, F = a.n.features, K = S + F, G = 3 * S;
  Scratch d_gates(size_t(B * G) * sizeof(T), dev.stream);
  backward_pointwise<T><<<blocks_for(B * G), 256, 0, dev.stream>>>(t, d_gates.as<T>());
  LLTM_LAUNCH_CHECK("backward_pointwise");
  if (!use_cublas(B, S, K)) {
    const int k_tiles = int((K + kTile - 1) / kTile);
    const int64_t tiles = ((G + kTile - 1) / kTile + (B + kTile - 1) / kTile) * k_tiles;
    backward_products<T><<<unsigned(tiles), dim3(kTile, kTile), 0, dev.stream>>>(t, d_gates.as<T>(), k_tiles);
    LLTM_LAUNCH_CHECK("backward_products");
    return;
  }
#if LLTM_HAVE_CUBLAS
  bias_sum<T><<<blocks_for(G), 256, 0, dev.stream>>>(t, d_gates.as<T>());
  LLTM_LAUNCH_CHECK("bias_sum");
  const T* dG = d_gates.as<T>();
  const Scratch x_scratch = blas_scratch(*a.X, dtype, dev.stream);
  const BlasMatrix<T> X = blas_matrix<T>(*a.X, x_scratch, dtype, dev.stream);
  const Scratch w_scratch = blas_scratch(*a.weights, dtype, dev.stream);
  const BlasMatrix<T> W = blas_matrix<T>(*a.weights, w_scratch, dtype, dev.stream);

  // Results land in the outputs when they are row-major, else in scratch and then a strided copy.
  auto product = [&](const lltm_tensor& out, auto&& compute) {
    if (row_major(out)) {
      compute(static_cast<T*>(out.data), int(out.strides[0]));
      return;
    }
    Scratch staged(size_t(out.sizes[0] * out.sizes[1]) * sizeof(T), dev.stream);
    compute(staged.as<T>(), int(out.sizes[1]));
    strided_copy(out, contiguous_like(out, staged.as<void>()), dtype, dev.stream);
  };
  // d_weights [3S, K] row-major = column-major [K, 3S] = X^T [K, B] . dG [B, 3S].
  product(*a.d_weights, [&](T* C, int ldc) {
    gemm(dev.blas, X.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_T, int(K), int(G), int(B), X.data, X.ld, dG,
         int(G), C, ldc);
  });
  // dX [B, K] = dG W; its column blocks are d_old_h (W's first S columns) and d_input.
  // Column-major: d_old_h^T [S, B] = W[:, :S]^T [S, 3S] . dG^T [3S, B].
  auto columns = [&](int64_t first) { return W.transposed ? W.data + first * W.ld : W.data + first; };
  product(*a.d_old_h, [&](T* C, int ldc) {
    gemm(dev.blas, W.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, int(S), int(B), int(G), columns(0), W.ld,
         dG, int(G), C, ldc);
  });
  product(*a.d_input, [&](T* C, int ldc) {
    gemm(dev.blas, W.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, int(F), int(B), int(G), columns(S), W.ld,
         dG, int(G), C, ldc);
  });
#endif
}

}  // namespace

void lltm_forward(const ForwardArgs& args, int32_t dtype, int device) {
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_forward", [&] { forward<scalar_t>(args, dtype, dev); });
}

void lltm_backward(const BackwardArgs& args, int32_t dtype, int device) {
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_backward", [&] { backward<scalar_t>(args, dtype, dev); });
}

}  // namespace lltm::cuda
