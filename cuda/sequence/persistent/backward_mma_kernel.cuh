// The persistent backward on the tensor cores (tensor_core.cuh), where
// float32 products may round to TF32: backward_split's work split (a block
// owns kSplitStates states of kSplitRows rows; a thread per cell computes
// its gate gradients, then its dh), with the product dh_{t-1} = dG_t W_h for
// the block's 16 staged rows of dG_t as m16 tiles: its warps split the depth
// 3S between them, each keeping its slice of W_h's columns as B fragments in
// registers for the whole sequence, and add their partial tiles in warp
// order through shared memory, so the results do not vary between runs.
#pragma once

#include <cooperative_groups.h>

#include <type_traits>

#include "sequence/cell.cuh"
#include "sequence/persistent/forward_mma_kernel.cuh"
#include "sequence/persistent/staging.cuh"
#include "sequence/persistent/tensor_core.cuh"

namespace lltm::cuda::persistent {

constexpr int kMmaStateTiles = kSplitStates / kMmaCols;
constexpr int kMmaBackwardSteps = 3 * kMmaMaxState / kMmaDepth / kWarps;
constexpr int kMmaBackwardPartialStride = kSplitStates + 4;

__host__ __device__ constexpr int64_t backward_mma_shared_bytes(int64_t S) {
  return (kSplitRows * mma_row_stride(3 * S) + int64_t(kWarps) * kSplitRows * kMmaBackwardPartialStride) *
         int64_t(sizeof(float));
}

// state_groups: the blocks along the states; the grid is state_groups times the groups of kSplitRows rows.
template <typename T>
__global__ void __launch_bounds__(kThreads, 1) backward_mma(SequenceBackwardTensors<T> p, int state_groups) {
  static_assert(std::is_same_v<T, float>, "TF32 products take float32 operands");
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int S = p.S, G = 3 * S;
  const int s0 = int(blockIdx.x) % state_groups * kSplitStates, b0 = int(blockIdx.x) / state_groups * kSplitRows;
  const int rows = min(kSplitRows, p.B - b0);
  const int ld = int(mma_row_stride(G)), depth_tiles = int(mma_depth(G)) / kMmaDepth;
  float* staged = reinterpret_cast<float*>(shared_bytes);  // [kSplitRows][ld]: the block's rows of dG_t
  float* partial = staged + kSplitRows * ld;               // [kWarps][kSplitRows][kMmaBackwardPartialStride]
  // Rows past B and the depth past 3S are never staged: zeros add nothing.
  for (int e = threadIdx.x; e < kSplitRows * ld; e += kThreads) staged[e] = 0.0f;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  // Column n of the block's state tiles is state s0 + n (past S: S - 1's, not stored).
  uint32_t w[kMmaBackwardSteps][kMmaStateTiles][2];
#pragma unroll
  for (int i = 0; i < kMmaBackwardSteps; ++i) {
#pragma unroll
    for (int n = 0; n < kMmaStateTiles; ++n) {
      const int s = min(s0 + n * kMmaCols + lane / 4, S - 1), k = (warp + i * kWarps) * kMmaDepth + lane % 4;
      w[i][n][0] = k < G ? to_tf32(p.weights[k][s]) : 0u;
      w[i][n][1] = k + 4 < G ? to_tf32(p.weights[k + 4][s]) : 0u;
    }
  }
  __syncthreads();  // the zeros before the rows staged over them
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
    stage_rows(staged, ld, p.dG + (int64_t(t) * p.B + b0) * G, rows, G);
    stage_wait();
    __syncthreads();
    float acc[kMmaStateTiles][4] = {};
#pragma unroll
    for (int i = 0; i < kMmaBackwardSteps; ++i) {
      const int tile = warp + i * kWarps;
      if (tile < depth_tiles) {
        const AFragment a = load_a(staged + tile * kMmaDepth, ld, lane);
#pragma unroll
        for (int n = 0; n < kMmaStateTiles; ++n) mma_tf32(acc[n], a, w[i][n][0], w[i][n][1]);
      }
    }
    float* mine = partial + warp * kSplitRows * kMmaBackwardPartialStride;
#pragma unroll
    for (int n = 0; n < kMmaStateTiles; ++n) store_tile(mine + n * kMmaCols, kMmaBackwardPartialStride, lane, acc[n]);
    __syncthreads();
    if (has_cell) {
      const float* sums = partial + r * kMmaBackwardPartialStride + j;
      float sum = sums[0];
#pragma unroll
      for (int k = 1; k < kWarps; ++k) sum += sums[k * kSplitRows * kMmaBackwardPartialStride];
      if (t > 0)
        p.dh[int64_t(cell_b) * S + cell_s] = sum;
      else
        p.d_h0[cell_b][cell_s] = sum;
    }
    // The staged rows and the partial tiles are next written after the
    // barrier and the staging's __syncthreads of step t - 1, when every
    // reader of this step is done with them.
  }
#endif
}

}  // namespace lltm::cuda::persistent
