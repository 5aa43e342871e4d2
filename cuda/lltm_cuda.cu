// The LLTM cell on CUDA. Two ways to run each pass, chosen by size:
//  - fused: for small sizes, where launches dominate, one kernel does the
//    forward pass (cat, GEMM, bias, activations) and two do the backward
//    (pointwise, then both products and the bias sum);
//  - cuBLAS: for large sizes, the products go to cuBLAS (SGEMM/DGEMM, no
//    reduced precision) and fused kernels do the rest.
// All math runs in the kernel's own type: double stays double throughout.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

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
  bool accumulate;  // add to d_weights and d_bias instead of overwriting them
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

// Small sizes: a warp per output, its lanes splitting the reduction and
// combining it with shuffles, so that hundreds of blocks spread over the SMs
// and each thread's chain of dependent work stays short.
constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

template <typename T>
__global__ void __launch_bounds__(kWarp* kWarpsPerBlock) forward_small(ForwardTensors<T> t) {
  const int lane = threadIdx.x % kWarp;
  const int64_t out = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp;
  if (out >= int64_t(t.B) * t.S) return;  // the whole warp leaves together
  const int b = int(out / t.S), s = int(out % t.S), K = t.S + t.F;
  const auto w0 = t.weights[s], w1 = t.weights[t.S + s], w2 = t.weights[2 * t.S + s];
  const auto h = t.old_h[b], x = t.input[b];
  // The epilogue's operands are loaded now, so that their latency overlaps the reduction's.
  const int gate = lane < 3 ? lane : 2;
  const T bias = t.bias[gate * t.S + s], old_cell = t.old_cell[b][s];
  T acc0 = 0, acc1 = 0, acc2 = 0;
  // No stores in this loop: the loads of several iterations are then issued together.
#pragma unroll 4
  for (int k = lane; k < K; k += kWarp) {
    const T v = k < t.S ? h[k] : x[k - t.S];
    acc0 += v * w0[k];
    acc1 += v * w1[k];
    acc2 += v * w2[k];
  }
  acc0 = warp_sum(acc0);
  acc1 = warp_sum(acc1);
  acc2 = warp_sum(acc2);
  // Lanes 0, 1 and 2 finish one gate each, in parallel.
  const T g = (gate == 0 ? acc0 : gate == 1 ? acc1 : acc2) + bias;
  const T activated = gate < 2 ? sigmoid(g) : (g > T(0) ? g : expm1_of(g));
  if (lane < 3) {
    t.gates[b][gate * t.S + s] = g;
    (gate == 0 ? t.input_gate : gate == 1 ? t.output_gate : t.candidate_cell)[b][s] = activated;
  }
  const T i = __shfl_sync(0xffffffffu, activated, 0), o = __shfl_sync(0xffffffffu, activated, 1),
          z = __shfl_sync(0xffffffffu, activated, 2);
  if (lane == 0) {
    const T cell = old_cell + z * i;
    t.new_cell[b][s] = cell;
    t.new_h[b][s] = tanh_of(cell) * o;
  }
  if (s == 0)
    for (int k = lane; k < K; k += kWarp) t.X[b][k] = k < t.S ? h[k] : x[k - t.S];
}

// Gradient of the loss with respect to gate n (before its activation) of batch row b.
// Every operand is loaded up front, whatever the gate, so that the loads
// overlap instead of waiting on each other through the branches.
template <typename T>
__device__ __forceinline__ T gate_gradient(const BackwardTensors<T>& t, int b, int n) {
  const int gate = n / t.S, s = n % t.S;
  const T grad_h = t.grad_h[b][s], o = t.output_gate[b][s], cell = t.new_cell[b][s], i = t.input_gate[b][s];
  const T grad_cell = t.grad_cell[b][s], z = t.candidate_cell[b][s], g2 = t.gates[b][2 * t.S + s];
  const T th = tanh_of(cell);
  if (gate == 1) return th * grad_h * o * (T(1) - o);
  const T d_cell = (T(1) - th * th) * o * grad_h + grad_cell;
  if (gate == 0) return z * d_cell * i * (T(1) - i);
  return i * d_cell * (g2 > T(0) ? T(1) : exp_of(g2));
}

template <typename T>
__device__ __forceinline__ T cell_gradient(const BackwardTensors<T>& t, int b, int s) {
  const T th = tanh_of(t.new_cell[b][s]);
  return (T(1) - th * th) * t.output_gate[b][s] * t.grad_h[b][s] + t.grad_cell[b][s];
}

// The backward pass for small sizes, in one cooperative launch: first every
// gate gradient into dG (and d_old_cell), then, after a grid-wide barrier,
// d_weights and d_bias (a thread per element, over the batch) and dX (a
// warp per element, its lanes over the 3S gates). Without cooperative
// launch the same kernel runs twice, one phase each (`phases` 1, then 2).
template <typename T>
__global__ void __launch_bounds__(kWarp* kWarpsPerBlock) backward_small(BackwardTensors<T> t, T* dG, int phases) {
  const int G = 3 * t.S, K = t.S + t.F;
  const int64_t thread = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, threads = int64_t(gridDim.x) * blockDim.x;
  if (phases & 1) {
    for (int64_t e = thread; e < int64_t(t.B) * G; e += threads) {
      const int b = int(e / G), n = int(e % G);
      dG[e] = gate_gradient(t, b, n);
      if (n < t.S) t.d_old_cell[b][n] = cell_gradient(t, b, n);
    }
  }
  if (phases == 3) {
    __threadfence();
    cooperative_groups::this_grid().sync();
  }
  if (!(phases & 2)) return;
  for (int64_t e = thread; e < int64_t(G) * K + G; e += threads) {
    if (e < int64_t(G) * K) {
      const int n = int(e / K), k = int(e % K);
      T acc = 0;
#pragma unroll 8
      for (int b = 0; b < t.B; ++b) acc += dG[int64_t(b) * G + n] * t.X[b][k];
      T& w = t.d_weights[n][k];
      w = (t.accumulate ? w : T(0)) + acc;
    } else {
      const int n = int(e - int64_t(G) * K);
      T acc = 0;
#pragma unroll 8
      for (int b = 0; b < t.B; ++b) acc += dG[int64_t(b) * G + n];
      T& db = t.d_bias[n];
      db = (t.accumulate ? db : T(0)) + acc;
    }
  }
  const int lane = int(thread % kWarp);
  for (int64_t out = thread / kWarp; out < int64_t(t.B) * K; out += threads / kWarp) {
    const int b = int(out / K), k = int(out % K);
    const T* row = dG + int64_t(b) * G;
    T acc = 0;
#pragma unroll 4
    for (int n = lane; n < G; n += kWarp) acc += row[n] * t.weights[n][k];
    acc = warp_sum(acc);
    if (lane == 0) (k < t.S ? t.d_old_h[b][k] : t.d_input[b][k - t.S]) = acc;
  }
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

// dG into a contiguous [B, 3S] buffer, and d_old_cell.
// One batch row per grid row (blockIdx.y), so no 64-bit division per element.
template <typename T>
__global__ void backward_pointwise(BackwardTensors<T> t, T* dG) {
  const int G = 3 * t.S;
  for (int b = blockIdx.y; b < t.B; b += gridDim.y)
    for (int g = blockIdx.x * blockDim.x + threadIdx.x; g < G; g += gridDim.x * blockDim.x) {
      dG[int64_t(b) * G + g] = gate_gradient(t, b, g);
      if (g < t.S) t.d_old_cell[b][g] = cell_gradient(t, b, g);
    }
}

// d_bias[n] = sum over b of dG[b][n].
template <typename T>
__global__ void bias_sum(BackwardTensors<T> t, const T* dG) {
  const int G = 3 * t.S;
  for (int n = blockIdx.x * blockDim.x + threadIdx.x; n < G; n += gridDim.x * blockDim.x) {
    T sum = 0;
    for (int b = 0; b < t.B; ++b) sum += dG[int64_t(b) * G + n];
    T& db = t.d_bias[n];
    db = (t.accumulate ? db : T(0)) + sum;
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

// One cooperative launch when the device supports it and the grid fits at
// once; otherwise two launches of the same kernel, one phase each.
template <typename T>
void backward_small_launch(const BackwardTensors<T>& t, T* dG, int64_t pointwise_work, int64_t product_threads,
                           DeviceState& dev) {
  constexpr int threads = kWarp * kWarpsPerBlock;
  std::atomic<int>& cached = dev.backward_blocks_per_sm[std::is_same<T, double>::value ? 1 : 0];
  int per_sm = cached.load(std::memory_order_relaxed);
  if (per_sm == 0) {
    LLTM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, backward_small<T>, threads, 0));
    cached.store(per_sm, std::memory_order_relaxed);
  }
  const int64_t wanted = (std::max(pointwise_work, product_threads) + threads - 1) / threads;
  const int64_t resident = int64_t(dev.multiprocessors) * per_sm;
  if (dev.cooperative_launch && resident > 0) {
    BackwardTensors<T> args = t;
    int phases = 3;
    void* params[] = {&args, &dG, &phases};
    const unsigned blocks = unsigned(std::min(wanted, resident));
    LLTM_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(backward_small<T>), dim3(blocks),
                                                dim3(threads), params, 0, dev.stream));
    return;
  }
  backward_small<T><<<blocks_for(pointwise_work), threads, 0, dev.stream>>>(t, dG, 1);
  LLTM_LAUNCH_CHECK("backward_small (gate gradients)");
  backward_small<T><<<unsigned(std::min<int64_t>((product_threads + threads - 1) / threads, 65535)), threads, 0,
                      dev.stream>>>(t, dG, 2);
  LLTM_LAUNCH_CHECK("backward_small (products)");
}

#if LLTM_HAVE_CUBLAS
// ---- cuBLAS helpers (column-major) ----

// C = op(A) op(B) + beta C
void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* A, int lda,
          const float* B, int ldb, float* C, int ldc, float beta = 0) {
  const float one = 1;
  LLTM_CUDA_CHECK(cublasSgemm(h, ta, tb, m, n, k, &one, A, lda, B, ldb, &beta, C, ldc));
}

void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const double* A, int lda,
          const double* B, int ldb, double* C, int ldc, double beta = 0) {
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
  return Scratch(in_place ? 0 : size_t(numel(t) * element_size(dtype)));
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
          int(a.n.state),                       a.accumulate};
}

template <typename T>
void forward(const ForwardArgs& a, int32_t dtype, DeviceState& dev) {
  const ForwardTensors<T> t = forward_tensors<T>(a);
  const int64_t B = a.n.batch, S = a.n.state, K = S + a.n.features;
  if (!use_cublas(B, S, K)) {
    const int64_t blocks = (B * S + kWarpsPerBlock - 1) / kWarpsPerBlock;
    forward_small<T><<<unsigned(blocks), kWarp * kWarpsPerBlock, 0, dev.stream>>>(t);
    LLTM_LAUNCH_CHECK("forward_small");
    return;
  }
#if LLTM_HAVE_CUBLAS
  const int64_t G = 3 * S;
  // X: the output itself when cuBLAS can read it, else a contiguous copy beside it.
  const bool x_direct = is_contiguous(*a.X);
  Scratch x_scratch(x_direct ? 0 : size_t(B * K) * sizeof(T));
  T* Xc = x_direct ? static_cast<T*>(a.X->data) : x_scratch.as<T>();
  cat_kernel<T><<<blocks_for(B * K), 256, 0, dev.stream>>>(t, Xc, !x_direct);
  LLTM_LAUNCH_CHECK("cat_kernel");
  const Scratch w_scratch = blas_scratch(*a.weights, dtype);
  const BlasMatrix<T> W = blas_matrix<T>(*a.weights, w_scratch, dtype, dev.stream);
  Scratch g_scratch(size_t(B * G) * sizeof(T));
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
  Scratch d_gates(size_t(B * G) * sizeof(T));
  if (!use_cublas(B, S, K)) {
    backward_small_launch(t, d_gates.as<T>(), B * G, G * K + G + B * K * kWarp, dev);
    return;
  }
  const dim3 pointwise_grid(blocks_for(G), unsigned(B < 65535 ? B : 65535));
  backward_pointwise<T><<<pointwise_grid, 256, 0, dev.stream>>>(t, d_gates.as<T>());
  LLTM_LAUNCH_CHECK("backward_pointwise");
#if LLTM_HAVE_CUBLAS
  bias_sum<T><<<blocks_for(G), 256, 0, dev.stream>>>(t, d_gates.as<T>());
  LLTM_LAUNCH_CHECK("bias_sum");
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
    gemm(dev.blas, X.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_T, int(K), int(G), int(B), X.data, X.ld, dG,
         int(G), C, ldc, beta);
  });
  // dX [B, K] = dG W; its column blocks are d_old_h (W's first S columns) and d_input.
  // Column-major: d_old_h^T [S, B] = W[:, :S]^T [S, 3S] . dG^T [3S, B].
  auto columns = [&](int64_t first) { return W.transposed ? W.data + first * W.ld : W.data + first; };
  product(*a.d_old_h, false, [&](T* C, int ldc, T) {
    gemm(dev.blas, W.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, int(S), int(B), int(G), columns(0), W.ld,
         dG, int(G), C, ldc);
  });
  product(*a.d_input, false, [&](T* C, int ldc, T) {
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
