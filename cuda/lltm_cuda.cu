// The LLTM cell on CUDA. Two ways to run each pass, chosen by size:
//  - fused: for small sizes, where launches dominate, one kernel does the
//    forward pass (cat, GEMM, bias, activations) and one the backward;
//  - cuBLAS: for large sizes, the products go to cuBLAS (SGEMM/DGEMM, no
//    reduced precision) and fused kernels do the rest.
// All math runs in the kernel's own type: double stays double throughout.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "accessor.h"
#include "device.h"
#include "dispatch.h"
#include "launch.h"
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

// expm1 rather than exp(x) - 1, which loses digits near 0.
template <typename T>
__device__ __forceinline__ T elu(T x) {
  return x > T(0) ? x : expm1_of(x);
}

// The tensors of one call as kernel arguments; I is the accessors' index type.
template <typename T, typename I = int64_t>
struct ForwardTensors {
  Accessor<const T, 2, I> input, weights, old_h, old_cell;
  Accessor<const T, 1, I> bias;
  Accessor<T, 2, I> new_h, new_cell, input_gate, output_gate, candidate_cell, X, gates;
  int B, F, S;
};

template <typename T, typename I = int64_t>
struct BackwardTensors {
  Accessor<const T, 2, I> grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, X, gates, weights;
  Accessor<T, 2, I> d_old_h, d_input, d_weights, d_old_cell;
  Accessor<T, 1, I> d_bias;
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
  const T z = elu(g2);
  const T cell = t.old_cell[b][s] + z * i;
  t.input_gate[b][s] = i;
  t.output_gate[b][s] = o;
  t.candidate_cell[b][s] = z;
  t.new_cell[b][s] = cell;
  t.new_h[b][s] = tanh_of(cell) * o;
}

// Small sizes, where launch latency and each warp's chain of dependent
// instructions dominate. A warp computes kWarpStates states of one batch
// row: its lanes split the reduction over K for all 3 x kWarpStates gate
// rows at once (one load of X serves them all), and a butterfly exchange
// sums the kSums (padded) partial sums in far fewer shuffles than one
// reduction per sum, leaving sum r in the kLanesPerSum lanes from
// r * kLanesPerSum, which then run the activations side by side. A block's
// warps cover kForwardRows batch rows by kForwardGroups groups of states.
constexpr int kWarp = 32;
constexpr int kWarpStates = 4;
constexpr int kGateRows = 3 * kWarpStates;
constexpr int kSums = kGateRows <= 4 ? 4 : kGateRows <= 8 ? 8 : 16;  // padded to a power of two
constexpr int kLanesPerSum = kWarp / kSums;
constexpr int kForwardRows = 2;
constexpr int kForwardGroups = 2;
constexpr int kForwardThreads = kWarp * kForwardRows * kForwardGroups;
static_assert(kGateRows <= kSums && kSums <= kWarp, "every sum ends in its own lanes");

// One step of butterfly_sum: a lane keeps the half of its sums selected by
// its lane bit Half * kLanesPerSum and adds its partner's copy of that half.
// A template per step, so that every index is a constant and v stays in registers.
template <int Half, typename T>
__device__ __forceinline__ void butterfly_step(T (&v)[kSums], int lane) {
  constexpr int offset = Half * kLanesPerSum;
  const bool upper = lane & offset;
#pragma unroll
  for (int i = 0; i < Half; ++i) {
    const T send = upper ? v[i] : v[i + Half];
    const T keep = upper ? v[i + Half] : v[i];
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, offset);
  }
  if constexpr (Half > 1) butterfly_step<Half / 2>(v, lane);
}

// Sums v[r] over the warp; sum r lands in lanes r * kLanesPerSum to (r + 1) * kLanesPerSum - 1.
template <typename T>
__device__ __forceinline__ T butterfly_sum(T (&v)[kSums], int lane) {
  butterfly_step<kSums / 2>(v, lane);
  T sum = v[0];
#pragma unroll
  for (int offset = kLanesPerSum / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  return sum;
}

template <typename T, typename I>
__global__ void __launch_bounds__(kForwardThreads) forward_small(ForwardTensors<T, I> t) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int group = blockIdx.x * kForwardGroups + warp % kForwardGroups, s0 = group * kWarpStates;
  if (s0 >= t.S) return;  // the whole warp leaves together
  const int K = t.S + t.F;
  // States past S read row S-1 instead, and their results are not stored.
  Accessor<const T, 1, I> w[kGateRows];
#pragma unroll
  for (int q = 0; q < kGateRows; ++q) w[q] = t.weights[q / kWarpStates * t.S + min(s0 + q % kWarpStates, t.S - 1)];
  const int r = lane / kLanesPerSum, gate = r / kWarpStates, s = s0 + r % kWarpStates;
  const bool owner = lane % kLanesPerSum == 0 && r < kGateRows && s < t.S;  // stores gate `gate` of state s
  const bool finisher = lane < kWarpStates && s0 + lane < t.S;   // computes the cell of state s0 + lane
  const T bias = owner ? t.bias[gate * t.S + s] : T(0);
  const int groups = (t.S + kWarpStates - 1) / kWarpStates;
  for (int b = blockIdx.y * kForwardRows + warp / kForwardGroups; b < t.B; b += gridDim.y * kForwardRows) {
    const auto h = t.old_h[b], x = t.input[b];
    // Loaded now, so that its latency overlaps the reduction's.
    const T old_cell = finisher ? t.old_cell[b][s0 + lane] : T(0);
    T acc[kSums] = {};
    // No stores in this loop: the loads of several iterations are then issued together.
#pragma unroll 4
    for (int k = lane; k < K; k += kWarp) {
      const T v = k < t.S ? h[k] : x[k - t.S];
#pragma unroll
      for (int q = 0; q < kGateRows; ++q) acc[q] += v * w[q][k];
    }
    const T g = butterfly_sum(acc, lane) + bias;
    const T activated = gate < 2 ? sigmoid(g) : elu(g);
    if (owner) {
      t.gates[b][gate * t.S + s] = g;
      (gate == 0 ? t.input_gate : gate == 1 ? t.output_gate : t.candidate_cell)[b][s] = activated;
    }
    const int j = lane % kWarpStates;
    const T i = __shfl_sync(0xffffffffu, activated, kLanesPerSum * j);
    const T o = __shfl_sync(0xffffffffu, activated, kLanesPerSum * (kWarpStates + j));
    const T z = __shfl_sync(0xffffffffu, activated, kLanesPerSum * (2 * kWarpStates + j));
    if (finisher) {
      const T cell = old_cell + z * i;
      t.new_cell[b][s0 + lane] = cell;
      t.new_h[b][s0 + lane] = tanh_of(cell) * o;
    }
    // Row b of X is written by all of that row's warps, a few elements each, so no warp's tail grows with K.
    for (int k = group * kWarp + lane; k < K; k += groups * kWarp) t.X[b][k] = k < t.S ? h[k] : x[k - t.S];
  }
}

// Gradient of the loss with respect to gate n (before its activation) of
// batch row b; d_cell receives the gradient with respect to the new cell of
// state n % S, which is also the old cell's (c' = c + z i).
// Every operand is loaded up front, whatever the gate, so that the loads
// overlap instead of waiting on each other through the branches.
template <typename T, typename I>
__device__ __forceinline__ T gate_gradient(const BackwardTensors<T, I>& t, int b, int n, T& d_cell) {
  const int gate = n / t.S, s = n % t.S;
  const T grad_h = t.grad_h[b][s], o = t.output_gate[b][s], cell = t.new_cell[b][s], i = t.input_gate[b][s];
  const T grad_cell = t.grad_cell[b][s], z = t.candidate_cell[b][s], g2 = t.gates[b][2 * t.S + s];
  const T th = tanh_of(cell);
  d_cell = (T(1) - th * th) * o * grad_h + grad_cell;
  if (gate == 1) return th * grad_h * o * (T(1) - o);
  if (gate == 0) return z * d_cell * i * (T(1) - i);
  return i * d_cell * (g2 > T(0) ? T(1) : exp_of(g2));
}

// The backward pass for small sizes, in one launch and without a grid-wide
// barrier: each block recomputes, into shared memory, the gate gradients dG
// its outputs need (a few loads and one tanh each, cheaper than waiting for
// another block to publish them). Two kinds of block share the grid:
//  - weight blocks own a tile of d_weights = dG^T X (kTile gates x kTile
//    columns) and, in the first column tile, d_bias for those gates and
//    d_old_cell for those of the first S gates (a by-product of dG);
//  - input blocks own kRows batch rows x kTile columns of dX = dG W, which
//    are d_old_h and d_input side by side; their kSlices warps split the
//    reduction over the 3S gates and combine it through shared memory.
// Sums run in a fixed order, so results do not vary from run to run.
constexpr int kTile = 32;
constexpr int kRows = 2;
constexpr int kGateChunk = 1024;  // gates per pass of an input block: one pass up to S = 341
constexpr int kBackwardThreads = 256;
constexpr int kSlices = kBackwardThreads / kTile;

struct BackwardGrid {
  int gate_tiles, column_tiles, row_tiles;
  __host__ __device__ int weight_blocks() const { return gate_tiles * column_tiles; }
  __host__ __device__ int blocks() const { return weight_blocks() + row_tiles * column_tiles; }
};

BackwardGrid backward_grid(int64_t B, int64_t S, int64_t K) {
  return {int((3 * S + kTile - 1) / kTile), int((K + kTile - 1) / kTile), int((B + kRows - 1) / kRows)};
}

template <typename T, typename I>
__device__ void weight_block(const BackwardTensors<T, I>& t, int tile, int column_tiles, T* shared) {
  const int G = 3 * t.S, K = t.S + t.F;
  const int n0 = tile / column_tiles * kTile, k0 = tile % column_tiles * kTile;
  const int lane = threadIdx.x % kTile, slice = threadIdx.x / kTile;
  T* dG = shared;              // [kTile batch rows][kTile gates]
  T* X = shared + kTile * kTile;  // [kTile batch rows][kTile columns]
  constexpr int kPerThread = kTile / kSlices;
  T acc[kPerThread] = {};
  T bias = 0;
  for (int b0 = 0; b0 < t.B; b0 += kTile) {
    const int rows = min(kTile, t.B - b0);
    for (int e = threadIdx.x; e < rows * kTile; e += kBackwardThreads) {
      const int b = b0 + e / kTile, n = n0 + e % kTile, k = k0 + e % kTile;
      T d_cell;
      dG[e] = n < G ? gate_gradient(t, b, n, d_cell) : T(0);
      if (k0 == 0 && n < t.S) t.d_old_cell[b][n] = d_cell;
      X[e] = k < K ? t.X[b][k] : T(0);
    }
    __syncthreads();
    for (int r = 0; r < rows; ++r) {
      const T x = X[r * kTile + lane];
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) acc[j] += dG[r * kTile + slice + j * kSlices] * x;
    }
    if (k0 == 0 && threadIdx.x < kTile)
      for (int r = 0; r < rows; ++r) bias += dG[r * kTile + threadIdx.x];
    __syncthreads();
  }
  const int k = k0 + lane;
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int n = n0 + slice + j * kSlices;
    if (n < G && k < K) {
      T& w = t.d_weights[n][k];
      w = (t.accumulate ? w : T(0)) + acc[j];
    }
  }
  if (k0 == 0 && threadIdx.x < kTile && n0 + int(threadIdx.x) < G) {
    T& db = t.d_bias[n0 + threadIdx.x];
    db = (t.accumulate ? db : T(0)) + bias;
  }
}

template <typename T, typename I>
__device__ void input_block(const BackwardTensors<T, I>& t, int tile, int column_tiles, T* shared) {
  const int G = 3 * t.S, K = t.S + t.F;
  const int b0 = tile / column_tiles * kRows, k = tile % column_tiles * kTile + threadIdx.x % kTile;
  const int slice = threadIdx.x / kTile;
  T* dG = shared;  // [kRows batch rows][gates of this pass]
  T acc[kRows] = {};
  for (int n0 = 0; n0 < G; n0 += kGateChunk) {
    const int gates = min(kGateChunk, G - n0);
    for (int e = threadIdx.x; e < kRows * gates; e += kBackwardThreads) {
      const int b = b0 + e / gates, n = n0 + e % gates;
      T d_cell;
      dG[e] = b < t.B ? gate_gradient(t, b, n, d_cell) : T(0);
    }
    __syncthreads();
    if (k < K) {
      // 24 loads of W in flight per thread: at S = 128 a thread's 48 gates then take two trips to L2, not six.
#pragma unroll 24
      for (int n = slice; n < gates; n += kSlices) {
        const T w = t.weights[n0 + n][k];
#pragma unroll
        for (int r = 0; r < kRows; ++r) acc[r] += dG[r * gates + n] * w;
      }
    }
    __syncthreads();
  }
  T* partial = shared;  // [kSlices][kRows][kTile]
#pragma unroll
  for (int r = 0; r < kRows; ++r) partial[(slice * kRows + r) * kTile + threadIdx.x % kTile] = acc[r];
  __syncthreads();
  if (threadIdx.x >= kRows * kTile) return;
  const int r = threadIdx.x / kTile, b = b0 + r;
  if (b >= t.B || k >= K) return;
  T sum = 0;
  for (int s = 0; s < kSlices; ++s) sum += partial[(s * kRows + r) * kTile + threadIdx.x % kTile];
  (k < t.S ? t.d_old_h[b][k] : t.d_input[b][k - t.S]) = sum;
}

template <typename T, typename I>
__global__ void __launch_bounds__(kBackwardThreads) backward_small(BackwardTensors<T, I> t, BackwardGrid grid) {
  __shared__ T shared[2 * kTile * kTile];
  static_assert(kRows * kGateChunk <= 2 * kTile * kTile && kSlices * kRows * kTile <= 2 * kTile * kTile,
                "the input blocks' buffers fit in the weight blocks' one");
  const int block = blockIdx.x;
  if (block < grid.weight_blocks())
    weight_block(t, block, grid.column_tiles, shared);
  else
    input_block(t, block - grid.weight_blocks(), grid.column_tiles, shared);
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
      T d_cell;
      dG[int64_t(b) * G + g] = gate_gradient(t, b, g, d_cell);
      if (g < t.S) t.d_old_cell[b][g] = d_cell;
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


enum class Path { kFused32, kFused64, kCublas };

// Small sizes take the fused kernels, with 32-bit indexing where every
// offset fits; LLTM_CUDA_KERNELS=fused|fused-int64|cublas forces a path (for
// measurements and tests).
Path choose_path(int64_t B, int64_t S, int64_t K, bool fits_int32) {
  static const char* forced = std::getenv("LLTM_CUDA_KERNELS");
  const bool force = forced != nullptr;
  if (force && std::strcmp(forced, "fused-int64") == 0) return Path::kFused64;
  if (force && std::strcmp(forced, "cublas") == 0) return Path::kCublas;  // refused below without cuBLAS
  const bool small = !LLTM_HAVE_CUBLAS || (force && std::strcmp(forced, "fused") == 0) ||
                     double(B) * 3 * S * K <= double(1 << 23);
  if (!small) return Path::kCublas;
  return fits_int32 ? Path::kFused32 : Path::kFused64;
}

#if !LLTM_HAVE_CUBLAS
// The cuBLAS path in a build without cuBLAS: only LLTM_CUDA_KERNELS=cublas
// (or a chooser bug) gets here, and it must not return as if it had run.
[[noreturn]] void no_cublas(const char* fn) {
  fail(LLTM_ERR_BACKEND_UNAVAILABLE, std::string(fn) +
                                         ": the cuBLAS path was asked for (LLTM_CUDA_KERNELS=cublas), but this build "
                                         "of liblltm_cuda has no cuBLAS; unset LLTM_CUDA_KERNELS or rebuild with cuBLAS");
}
#endif

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

template <typename T, typename I = int64_t>
ForwardTensors<T, I> forward_tensors(const ForwardArgs& a) {
  return {accessor<const T, 2, I>(*a.input),    accessor<const T, 2, I>(*a.weights),
          accessor<const T, 2, I>(*a.old_h),    accessor<const T, 2, I>(*a.old_cell),
          accessor1<const T, I>(*a.bias),       accessor<T, 2, I>(*a.new_h),
          accessor<T, 2, I>(*a.new_cell),       accessor<T, 2, I>(*a.input_gate),
          accessor<T, 2, I>(*a.output_gate),    accessor<T, 2, I>(*a.candidate_cell),
          accessor<T, 2, I>(*a.X),              accessor<T, 2, I>(*a.gate_weights),
          int(a.n.batch),                       int(a.n.features),
          int(a.n.state)};
}

template <typename T, typename I = int64_t>
BackwardTensors<T, I> backward_tensors(const BackwardArgs& a) {
  return {accessor<const T, 2, I>(*a.grad_h),      accessor<const T, 2, I>(*a.grad_cell),
          accessor<const T, 2, I>(*a.new_cell),    accessor<const T, 2, I>(*a.input_gate),
          accessor<const T, 2, I>(*a.output_gate), accessor<const T, 2, I>(*a.candidate_cell),
          accessor<const T, 2, I>(*a.X),           accessor<const T, 2, I>(*a.gate_weights),
          accessor<const T, 2, I>(*a.weights),     accessor<T, 2, I>(*a.d_old_h),
          accessor<T, 2, I>(*a.d_input),           accessor<T, 2, I>(*a.d_weights),
          accessor<T, 2, I>(*a.d_old_cell),        accessor1<T, I>(*a.d_bias),
          int(a.n.batch),                          int(a.n.features),
          int(a.n.state),                          a.accumulate};
}

bool fits_int32(std::initializer_list<const lltm_tensor*> tensors) {
  for (const lltm_tensor* t : tensors)
    if (!lltm::fits_int32(*t)) return false;
  return true;
}

bool fits_int32(const ForwardArgs& a) {
  return fits_int32({a.input, a.weights, a.bias, a.old_h, a.old_cell, a.new_h, a.new_cell, a.input_gate,
                     a.output_gate, a.candidate_cell, a.X, a.gate_weights});
}

bool fits_int32(const BackwardArgs& a) {
  return fits_int32({a.grad_h, a.grad_cell, a.new_cell, a.input_gate, a.output_gate, a.candidate_cell, a.X,
                     a.gate_weights, a.weights, a.d_old_h, a.d_input, a.d_weights, a.d_bias, a.d_old_cell});
}

template <typename T, typename I>
void forward_small_launch(const ForwardArgs& a, cudaStream_t stream) {
  const int64_t B = a.n.batch, S = a.n.state;
  const int64_t states_per_block = kWarpStates * kForwardGroups;
  const dim3 grid(unsigned((S + states_per_block - 1) / states_per_block),
                  grid_rows((B + kForwardRows - 1) / kForwardRows));
  forward_small<T, I><<<grid, kForwardThreads, 0, stream>>>(forward_tensors<T, I>(a));
  LLTM_LAUNCH_CHECK("forward_small");
}

template <typename T, typename I>
void backward_small_launch(const BackwardArgs& a, cudaStream_t stream) {
  const BackwardGrid grid = backward_grid(a.n.batch, a.n.state, a.n.state + a.n.features);
  backward_small<T, I><<<unsigned(grid.blocks()), kBackwardThreads, 0, stream>>>(backward_tensors<T, I>(a), grid);
  LLTM_LAUNCH_CHECK("backward_small");
}

template <typename T>
void forward(const ForwardArgs& a, int32_t dtype, DeviceState& dev) {
  const int64_t B = a.n.batch, S = a.n.state, K = S + a.n.features;
  const Path path = choose_path(B, S, K, fits_int32(a));
  if (path == Path::kFused32) return forward_small_launch<T, int32_t>(a, dev.stream);
  if (path == Path::kFused64) return forward_small_launch<T, int64_t>(a, dev.stream);
#if LLTM_HAVE_CUBLAS
  const ForwardTensors<T> t = forward_tensors<T>(a);
  const int64_t G = 3 * S;
  // X: the output itself when cuBLAS can read it, else a contiguous copy beside it.
  const bool x_direct = is_contiguous(*a.X);
  Scratch x_scratch(x_direct ? 0 : size_t(B * K) * sizeof(T));
  T* Xc = x_direct ? static_cast<T*>(a.X->data) : x_scratch.as<T>();
  cat_kernel<T><<<grid_blocks(B * K), kBlockThreads, 0, dev.stream>>>(t, Xc, !x_direct);
  LLTM_LAUNCH_CHECK("cat_kernel");
  const Scratch w_scratch = blas_scratch(*a.weights, dtype);
  const BlasMatrix<T> W = blas_matrix<T>(*a.weights, w_scratch, dtype, dev.stream);
  Scratch g_scratch(size_t(B * G) * sizeof(T));
  // Row-major G [B, 3S] is column-major G^T [3S, B] = W [3S, K] . X^T [K, B].
  gemm(dev.blas, W.transposed ? CUBLAS_OP_N : CUBLAS_OP_T, CUBLAS_OP_N, int(G), int(B), int(K), W.data, W.ld, Xc,
       int(K), g_scratch.as<T>(), int(G));
  forward_pointwise<T><<<grid_blocks(B * S), kBlockThreads, 0, dev.stream>>>(t, g_scratch.as<T>());
  LLTM_LAUNCH_CHECK("forward_pointwise");
#else
  (void)dtype;
  no_cublas("lltm_forward");
#endif
}

template <typename T>
void backward(const BackwardArgs& a, int32_t dtype, DeviceState& dev) {
  const int64_t B = a.n.batch, S = a.n.state, F = a.n.features, K = S + F, G = 3 * S;
  const Path path = choose_path(B, S, K, fits_int32(a));
  if (path == Path::kFused32) return backward_small_launch<T, int32_t>(a, dev.stream);
  if (path == Path::kFused64) return backward_small_launch<T, int64_t>(a, dev.stream);
#if LLTM_HAVE_CUBLAS
  const BackwardTensors<T> t = backward_tensors<T>(a);
  Scratch d_gates(size_t(B * G) * sizeof(T));
  const dim3 pointwise_grid(grid_blocks(G), grid_rows(B));
  backward_pointwise<T><<<pointwise_grid, kBlockThreads, 0, dev.stream>>>(t, d_gates.as<T>());
  LLTM_LAUNCH_CHECK("backward_pointwise");
  bias_sum<T><<<grid_blocks(G), kBlockThreads, 0, dev.stream>>>(t, d_gates.as<T>());
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
#else
  (void)dtype, (void)F, (void)G;
  no_cublas("lltm_backward");
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
