// One launch for d_weights and d_bias (weight_gradients.h): a cluster of
// kSplit blocks shares a tile of kGates gates by kColumns columns of
// [H, X, 1] (the last column gives the bias); each block sums its slice of
// the rows, and the cluster's first block adds the slices' partial sums in
// rank order through distributed shared memory, so results do not vary
// between runs.
#include <cooperative_groups.h>

#include "math/dtype.cuh"
#include "runtime/launch.h"
#include "sequence/weight_gradients.h"

namespace lltm::cuda {

namespace {

namespace cg = cooperative_groups;

constexpr int kGates = 32;  // a block's gates, one per lane
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kColumnsPerLane = 4;
constexpr int kColumns = kWarps * kColumnsPerLane;  // warp w takes the tile's columns w, w + kWarps, ...
constexpr int kChunkRows = 64;                      // rows staged in shared memory at once
constexpr int kSplit = 8;                           // a cluster's blocks (the portable cluster size)
constexpr int64_t kMaxRows = int64_t(1) << 20;      // past this a block's slice is long enough for cuBLAS to win
// The most d_weights and d_bias elements it takes: the sizes where it was
// measured ahead of cuBLAS (BENCHMARKS.md), whose products there are split
// over K for want of outputs.
constexpr int64_t kMaxOutputs = 4096;
constexpr int kStaged = kChunkRows * kGates / kThreads;  // a thread's elements of a chunk, of dG and of [H, X, 1]
constexpr int kSummed = kColumns * kGates / kThreads;     // a thread's elements of the tile in the cluster's sum
static_assert(kColumns == kGates, "a chunk's dG and [H, X, 1] are staged by the same threads");

// Row r's value in column c of [H, X, 1], zero past the rows or columns.
template <typename T>
__device__ __forceinline__ Accumulate<T> column_value(const WeightGradients<T>& a, int64_t r, int64_t r1, int64_t c) {
  const int64_t S = a.H.cols, F = a.X.cols;
  const T* at = c < S ? a.H.data + r * a.H.rs + c * a.H.cs : a.X.data + r * a.X.rs + (c - S) * a.X.cs;
  if (r >= r1 || c > S + F) return Accumulate<T>(0);
  return c == S + F ? Accumulate<T>(1) : widen(*at);
}

// Grid: x the cluster's blocks (its rank), y the gate tiles, z the column
// tiles. A thread loads its elements of the next chunk into registers while
// the block multiplies the staged one, every load in flight at once: the
// loads wait on L2, not the arithmetic.
template <typename T>
__global__ void __launch_bounds__(kThreads) weight_gradients_kernel(WeightGradients<T> a) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  using Acc = Accumulate<T>;
  __shared__ Acc gates[kChunkRows][kGates];        // the chunk's dG, the tile's gates
  __shared__ Acc values[kChunkRows][kColumns + 1];  // the chunk's [H, X, 1], the tile's columns
  __shared__ Acc partial[kColumns * kGates];        // [column][gate]: this block's sums over its slice
  const cg::cluster_group cluster = cg::this_cluster();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, rank = int(cluster.block_rank());
  const int64_t R = a.dG.rows, G = a.dG.cols, columns = a.H.cols + a.X.cols + 1;
  const int64_t g0 = int64_t(blockIdx.y) * kGates, c0 = int64_t(blockIdx.z) * kColumns;
  const int64_t slice = (R + kSplit - 1) / kSplit, r0 = rank * slice, r1 = min(R, r0 + slice);
  Acc next_gate[kStaged], next_value[kStaged];
  auto load = [&](int64_t rc) {
#pragma unroll
    for (int k = 0; k < kStaged; ++k) {
      const int e = threadIdx.x + k * kThreads;
      const int64_t r = rc + e / kGates, g = g0 + e % kGates;
      next_gate[k] = r < r1 && g < G ? widen(a.dG.data[r * a.dG.rs + g * a.dG.cs]) : Acc(0);
      next_value[k] = column_value(a, r, r1, c0 + e % kGates);
    }
  };
  Acc acc[kColumnsPerLane] = {};
  load(r0);
  for (int64_t rc = r0; rc < r1; rc += kChunkRows) {
#pragma unroll
    for (int k = 0; k < kStaged; ++k) {
      const int e = threadIdx.x + k * kThreads;
      gates[e / kGates][e % kGates] = next_gate[k];
      values[e / kGates][e % kGates] = next_value[k];
    }
    __syncthreads();
    if (rc + kChunkRows < r1) load(rc + kChunkRows);
#pragma unroll 8
    for (int i = 0; i < kChunkRows; ++i) {
      const Acc d = gates[i][lane];
#pragma unroll
      for (int j = 0; j < kColumnsPerLane; ++j) acc[j] += d * values[i][warp + j * kWarps];
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < kColumnsPerLane; ++j) partial[(warp + j * kWarps) * kGates + lane] = acc[j];
  cluster.sync();
  if (rank == 0) {
    // Each element's slices added in rank order.
    Acc sum[kSummed] = {};
#pragma unroll
    for (int b = 0; b < kSplit; ++b) {
      const Acc* slice_sums = cluster.map_shared_rank(partial, b);
#pragma unroll
      for (int k = 0; k < kSummed; ++k) sum[k] += slice_sums[threadIdx.x + k * kThreads];
    }
#pragma unroll
    for (int k = 0; k < kSummed; ++k) {
      const int e = threadIdx.x + k * kThreads;
      const int64_t gate = g0 + e % kGates, c = c0 + e / kGates;
      if (gate < G && c < columns) {
        T& out = c + 1 < columns ? a.d_weights.data[gate * a.d_weights.rs + c * a.d_weights.cs]
                                 : a.d_bias[gate * a.d_bias_stride];
        out = RoundTo<T>::from(a.accumulate ? widen(out) + sum[k] : sum[k]);
      }
    }
  }
  // Every block's partial sums stay readable until the first block has added them.
  cluster.sync();
#endif
}

}  // namespace

bool weight_gradients_fit(int64_t rows, int64_t gates, int64_t columns) {
  return rows <= kMaxRows && gates * (columns + 1) <= kMaxOutputs;
}

template <typename T>
void weight_gradients(const WeightGradients<T>& a, cudaStream_t stream) {
  const int64_t columns = a.H.cols + a.X.cols + 1;
  const dim3 grid(kSplit, unsigned((a.dG.cols + kGates - 1) / kGates), unsigned((columns + kColumns - 1) / kColumns));
  launch_cluster("weight_gradients_kernel", weight_gradients_kernel<T>, grid, dim3(kThreads), kSplit, 0, stream, a);
}

template void weight_gradients<float>(const WeightGradients<float>&, cudaStream_t);
template void weight_gradients<double>(const WeightGradients<double>&, cudaStream_t);

}  // namespace lltm::cuda
