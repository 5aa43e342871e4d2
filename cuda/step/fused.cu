// The step's fused kernels, for small sizes, where launches dominate: one
// kernel does the forward pass (cat, GEMM, bias, activations) and one the
// backward, both in the kernel's own type.
#include <algorithm>

#include "runtime/launch.h"
#include "step/fused.h"
#include "step/tensors.cuh"

namespace lltm::cuda {

namespace {

// Small sizes, where launch latency and each warp's chain of dependent
// instructions dominate. A warp computes kWarpStates states of one batch
// row: its lanes split the reduction over K for all 3 x kWarpStates gate
// rows at once (one load of X serves them all), and a butterfly exchange
// sums the kSums (padded) partial sums in far fewer shuffles than one
// reduction per sum, leaving sum r in the kLanesPerSum lanes from
// r * kLanesPerSum, which then run the activations side by side. A block's
// warps cover kForwardRows batch rows by kForwardGroups groups of states.
constexpr int kWarpStates = 4;
constexpr int kGateRows = 3 * kWarpStates;
constexpr int kSums = pow2_at_least(kGateRows);
constexpr int kLanesPerSum = kWarp / kSums;
constexpr int kForwardRows = 2;
constexpr int kForwardGroups = 2;
constexpr int kForwardThreads = kWarp * kForwardRows * kForwardGroups;
static_assert(kGateRows <= kSums && kSums <= kWarp, "every sum ends in its own lanes");

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

template <typename T, typename I>
void forward_small_launch(const ForwardArgs& a, cudaStream_t stream) {
  const int64_t B = a.n.batch, S = a.n.state;
  const int64_t states_per_block = kWarpStates * kForwardGroups;
  const dim3 grid(unsigned((S + states_per_block - 1) / states_per_block),
                  grid_rows((B + kForwardRows - 1) / kForwardRows));
  launch("forward_small", forward_small<T, I>, grid, dim3(kForwardThreads), 0, stream, forward_tensors<T, I>(a));
}

template <typename T, typename I>
void backward_small_launch(const BackwardArgs& a, cudaStream_t stream) {
  const BackwardGrid grid = backward_grid(a.n.batch, a.n.state, a.n.state + a.n.features);
  launch("backward_small", backward_small<T, I>, dim3(unsigned(grid.blocks())), dim3(kBackwardThreads), 0, stream,
         backward_tensors<T, I>(a), grid);
}

}  // namespace

template <typename T>
void fused_forward(const ForwardArgs& args, bool int32_indexing, cudaStream_t stream) {
  if (int32_indexing)
    forward_small_launch<T, int32_t>(args, stream);
  else
    forward_small_launch<T, int64_t>(args, stream);
}

template <typename T>
void fused_backward(const BackwardArgs& args, bool int32_indexing, cudaStream_t stream) {
  if (int32_indexing)
    backward_small_launch<T, int32_t>(args, stream);
  else
    backward_small_launch<T, int64_t>(args, stream);
}

template void fused_forward<float>(const ForwardArgs&, bool, cudaStream_t);
template void fused_forward<double>(const ForwardArgs&, bool, cudaStream_t);
template void fused_backward<float>(const BackwardArgs&, bool, cudaStream_t);
template void fused_backward<double>(const BackwardArgs&, bool, cudaStream_t);

}  // namespace lltm::cuda
