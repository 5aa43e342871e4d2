// The persistent backward on the tensor cores (tensor_core.cuh), where
// float32 products may round to TF32: backward_split's work split (a block
// owns kSplitStates states of kSplitRows rows; a thread per cell computes
// its gate gradients, then its dh), with the product dh_{t-1} = dG_t W_h for
// the block's 16 rows of dG_t as m16 tiles: its warps split the depth 3S
// between them, each keeping its slice of W_h's columns as B fragments in
// registers for the whole sequence and reading its slice of dG_t straight
// into A fragments, and add their partial tiles in warp order through shared
// memory, so the results do not vary between runs.
#pragma once

#include <cooperative_groups.h>

#include <type_traits>

#include "sequence/cell.cuh"
#include "sequence/persistent/forward_mma_kernel.cuh"
#include "sequence/persistent/tensor_core.cuh"

namespace lltm::cuda::persistent {

constexpr int kMmaStateTiles = kSplitStates / kMmaCols;
constexpr int kMmaBackwardPairs = 3 * kMmaMaxState / kPairDepth / kWarps;
constexpr int kMmaBackwardPartialStride = kSplitStates + 4;

constexpr int64_t kBackwardMmaSharedBytes = int64_t(kWarps) * kSplitRows * kMmaBackwardPartialStride * sizeof(float);

// state_groups: the blocks along the states; the grid is state_groups times the groups of kSplitRows rows.
template <typename T>
__global__ void __launch_bounds__(kThreads, 1) backward_mma(SequenceBackwardTensors<T> p, int state_groups) {
  static_assert(std::is_same_v<T, float>, "TF32 products take float32 operands");
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  float* partial = reinterpret_cast<float*>(shared_bytes);  // [kWarps][kSplitRows][kMmaBackwardPartialStride]
  const int S = p.S, G = 3 * S;
  const int s0 = int(blockIdx.x) % state_groups * kSplitStates, b0 = int(blockIdx.x) / state_groups * kSplitRows;
  const int rows = min(kSplitRows, p.B - b0), pairs = mma_pairs(G);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  // Column n of the block's state tiles is state s0 + n (past S: S - 1's, not stored).
  uint32_t w[kMmaBackwardPairs][2][kMmaStateTiles][2];
#pragma unroll
  for (int i = 0; i < kMmaBackwardPairs; ++i) {
#pragma unroll
    for (int tile = 0; tile < 2; ++tile) {
#pragma unroll
      for (int n = 0; n < kMmaStateTiles; ++n) {
        const int s = min(s0 + n * kMmaCols + lane / 4, S - 1), k = pair_depth(warp + i * kWarps, tile, lane);
        w[i][tile][n][0] = k < G ? to_tf32(p.weights[k][s]) : 0u;
        w[i][tile][n][1] = k + 1 < G ? to_tf32(p.weights[k + 1][s]) : 0u;
      }
    }
  }
  // A thread's cell (row r, state j of the block): its gate gradients, and
  // then its dh, so that the dh and dc it writes in one step it reads itself
  // in the next. Its saved values are loaded one step ahead, during the barrier.
  const int r = threadIdx.x / kSplitStates, j = threadIdx.x % kSplitStates;
  const int cell_b = b0 + r, cell_s = s0 + j;
  const bool has_cell = r < rows && cell_s < S;
  SavedCell<T> ahead = has_cell ? load_saved(p, p.steps - 1, cell_b, cell_s) : SavedCell<T>{};
  const bool vector = G % 4 == 0;
  cg::grid_group grid = cg::this_grid();
  for (int t = p.steps - 1; t >= 0; --t) {
    if (has_cell) backward_cell(p, t, cell_b, cell_s, ahead);
    // Every block's gate gradients of step t are in memory before any block
    // reads them; the partial tiles are next written after this barrier,
    // when every reader of the step before is done with them.
    auto token = grid.barrier_arrive();
    if (t > 0 && has_cell) ahead = load_saved(p, t - 1, cell_b, cell_s);
    grid.barrier_wait(std::move(token));
    const float* dg = p.dG + (int64_t(t) * p.B + b0) * G;
    auto dg_row4 = [&](int row, int k) {
      return row < rows ? row_floats(dg + int64_t(row) * G, k, G, vector) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    };
    float acc[kMmaStateTiles][4] = {};
#pragma unroll
    for (int i = 0; i < kMmaBackwardPairs; ++i) {
      const int pair = warp + i * kWarps;
      if (pair < pairs) {
        AFragment a[2];
        load_a_pair(dg_row4, pair, lane, a);
#pragma unroll
        for (int tile = 0; tile < 2; ++tile)
#pragma unroll
          for (int n = 0; n < kMmaStateTiles; ++n) mma_tf32(acc[n], a[tile], w[i][tile][n][0], w[i][tile][n][1]);
      }
    }
    float* mine = partial + warp * kSplitRows * kMmaBackwardPartialStride;
#pragma unroll
    for (int n = 0; n < kMmaStateTiles; ++n) store_tile(mine + n * kMmaCols, kMmaBackwardPartialStride, lane, acc[n]);
    __syncthreads();
    if (has_cell) {
      const float sum = sum_partials<kWarps>(partial, r * kMmaBackwardPartialStride + j,
                                             kSplitRows * kMmaBackwardPartialStride);
      if (t > 0)
        p.dh[int64_t(cell_b) * S + cell_s] = sum;
      else
        p.d_h0[cell_b][cell_s] = sum;
    }
  }
#endif
}

}  // namespace lltm::cuda::persistent
