// The persistent backward with the batch rows split between blocks as well as
// the states. Where every block owns a few states for all B rows, each step
// every block stages all of dG_t (B x 3S) from L2, and that traffic, not the
// arithmetic, sets the step's pace; here a block owns kSplitStates states of
// kSplitRows rows and stages only its rows' dG_t, so the step's L2 reads fall
// by the number of row groups (4 at B = 64). The product for a block is then
// kSplitRows x 3S times 3S x kSplitStates: its warps take the rows in groups
// of kSplitRowsPerWarp and split the sum over the 3S gates into
// kSplitSlices interleaved slices, added afterwards in slice order, so the
// results do not vary between runs.
#pragma once

#include <cooperative_groups.h>

#include <type_traits>

#include "sequence/cell.cuh"
#include "sequence/persistent/staging.cuh"
#include "sequence/persistent/work_split.cuh"

namespace lltm::cuda::persistent {

namespace cg = cooperative_groups;

constexpr int kSplitStates = 16;
constexpr int kSplitRows = 16;
constexpr int kSplitRowsPerWarp = 4;
constexpr int kSplitGroups = kSplitRows / kSplitRowsPerWarp;
constexpr int kSplitSlices = kWarps / kSplitGroups;
static_assert(kSplitGroups * kSplitSlices == kWarps, "every warp has a group of rows and a slice of the gates");
static_assert(kSplitRows * kSplitStates <= kThreads, "a thread per cell of the block");
// A weight row (kSplitStates floats) in 16-byte chunks.
constexpr int kSplitChunks = kSplitStates / 4;

// The chunk where weight row n keeps its chunk c: rotated so that the eight
// lanes of a quarter-warp, which read chunk c of eight consecutive rows at
// once, find them in eight different groups of banks (unrotated, rows 64
// bytes apart would fall on two).
__device__ __forceinline__ int swizzled_chunk(int n, int c) { return c ^ ((n >> 1) & (kSplitChunks - 1)); }

// The shared memory of a block at S states: the weights, the staged rows and the slices' partial sums.
__host__ __device__ constexpr int64_t split_shared_bytes(int64_t S) {
  return (3 * S * kSplitStates + 3 * S * kSplitRows + kSplitSlices * kSplitRows * kSplitStates) * int64_t(sizeof(float));
}

// state_groups: the blocks along the states (S / kSplitStates, rounded up);
// the grid is state_groups times the groups of kSplitRows rows. Float only:
// its weight rows are read as float4 chunks.
template <typename T>
__global__ void __launch_bounds__(kThreads, 1) backward_split(SequenceBackwardTensors<T> p, int state_groups) {
  static_assert(std::is_same_v<T, float>, "the split backward's weight rows are float4 chunks");
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int S = p.S, G = 3 * S;
  const int s0 = int(blockIdx.x) % state_groups * kSplitStates, b0 = int(blockIdx.x) / state_groups * kSplitRows;
  const int rows = min(kSplitRows, p.B - b0);
  float4* w = reinterpret_cast<float4*>(shared_bytes);     // [3S][kSplitChunks]: W_h[n][s0 ...], chunks swizzled
  T* staged = reinterpret_cast<T*>(w + int64_t(G) * kSplitChunks);  // [kSplitRows][3S]: the block's rows of dG_t
  T* partial = staged + int64_t(kSplitRows) * G;              // [kSplitSlices][kSplitRows][kSplitStates]
  // States past S read state S - 1 instead, and their sums are not stored.
  for (int e = threadIdx.x; e < G * kSplitStates; e += kThreads) {
    const int n = e / kSplitStates, j = e % kSplitStates;
    reinterpret_cast<T*>(w + n * kSplitChunks + swizzled_chunk(n, j / 4))[j % 4] = p.weights[n][min(s0 + j, S - 1)];
  }
  // Rows past B are never staged: zeros keep their unused sums finite.
  for (int e = rows * G + threadIdx.x; e < kSplitRows * G; e += kThreads) staged[e] = T(0);
  __syncthreads();
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int group = warp % kSplitGroups, slice = warp / kSplitGroups;
  // A thread's cell (row r, state j of the block): its gate gradients, and
  // then its dh, so that the dh and dc it writes in one step it reads itself
  // in the next. Its saved values are loaded one step ahead, during the barrier.
  const int r = threadIdx.x / kSplitStates, j = threadIdx.x % kSplitStates;
  const int cell_b = b0 + r, cell_s = s0 + j;
  const bool has_cell = r < rows && cell_s < S;
  SavedCell<T> ahead = has_cell ? load_saved(p, p.steps - 1, cell_b, cell_s) : SavedCell<T>{};
  cg::grid_group grid = cg::this_grid();
  for (int t = p.steps - 1; t >= 0; --t) {
    if (has_cell) backward_cell(p, t, cell_b, cell_s, ahead);
    // Every block's gate gradients of step t are in memory before any block reads them.
    auto token = grid.barrier_arrive();
    if (t > 0 && has_cell) ahead = load_saved(p, t - 1, cell_b, cell_s);
    grid.barrier_wait(std::move(token));
    stage(staged, p.dG + (int64_t(t) * p.B + b0) * G, int64_t(rows) * G);
    stage_wait();
    __syncthreads();
    // This warp's part of dh_{t-1}[b][s] = sum over n of dG_t[b][n] W_h[n][s]:
    // its group's rows, its slice's gates.
    const T* dg = staged + group * kSplitRowsPerWarp * G;
    T acc[kSplitRowsPerWarp][kSplitStates] = {};
#pragma unroll 1
    for (int n = slice * kWarp + lane; n < G; n += kSplitSlices * kWarp) {
      T wn[kSplitStates];
#pragma unroll
      for (int c = 0; c < kSplitChunks; ++c) {
        const float4 v = w[n * kSplitChunks + swizzled_chunk(n, c)];
        wn[4 * c] = v.x;
        wn[4 * c + 1] = v.y;
        wn[4 * c + 2] = v.z;
        wn[4 * c + 3] = v.w;
      }
#pragma unroll
      for (int row = 0; row < kSplitRowsPerWarp; ++row) {
        const T g = dg[row * G + n];
#pragma unroll
        for (int q = 0; q < kSplitStates; ++q) acc[row][q] += g * wn[q];
      }
    }
    // Two rows' sums a butterfly exchange: sum m (row m / kSplitStates of the
    // two, state m % kSplitStates) lands in lane m.
    constexpr int kPairRows = kWarp / kSplitStates;
#pragma unroll
    for (int pair = 0; pair < kSplitRowsPerWarp; pair += kPairRows) {
      T sums[kWarp];
#pragma unroll
      for (int e = 0; e < kWarp; ++e) sums[e] = acc[pair + e / kSplitStates][e % kSplitStates];
      const T sum = butterfly_sum(sums, lane);
      const int row = group * kSplitRowsPerWarp + pair + lane / kSplitStates;
      partial[(slice * kSplitRows + row) * kSplitStates + lane % kSplitStates] = sum;
    }
    __syncthreads();
    if (has_cell) {
      T sum = partial[r * kSplitStates + j];
#pragma unroll
      for (int k = 1; k < kSplitSlices; ++k) sum += partial[(k * kSplitRows + r) * kSplitStates + j];
      if (t > 0)
        p.dh[int64_t(cell_b) * S + cell_s] = sum;
      else
        p.d_h0[cell_b][cell_s] = sum;
    }
    // The staged rows and the partial sums are next written after the barrier
    // and the staging's __syncthreads of step t - 1, when every reader of
    // this step is done with them.
  }
}

}  // namespace lltm::cuda::persistent
