// The persistent forward with the batch rows split between blocks as well as
// the states, as the split backward (backward_split_kernel.cuh): a block owns
// kSplitStates states of kSplitRows rows, so each step stages only its rows'
// h_{t-1} from L2 instead of all B rows (a quarter of the reads at B = 64).
// Its 16 warps are kSplitQuads quads of kQuadStates states times
// kSplitGroups groups of kSplitRowsPerWarp rows: each warp runs the unsplit
// kernel's product, activations and cell updates (recurrent_sums,
// finish_rows) for its quad's states and its rows.
#pragma once

#include <cooperative_groups.h>

#include "sequence/cell.cuh"
#include "sequence/persistent/backward_split_kernel.cuh"
#include "sequence/persistent/forward_kernel.cuh"
#include "sequence/persistent/staging.cuh"
#include "sequence/persistent/work_split.cuh"

namespace lltm::cuda::persistent {

constexpr int kQuadStates = 4;
constexpr int kQuadGates = 3 * kQuadStates;
constexpr int kSplitQuads = kSplitStates / kQuadStates;
static_assert(kSplitQuads * kSplitGroups == kWarps, "every warp has a quad of states and a group of rows");

// The shared memory of a block at S states: each quad's W_h rows, the staged
// h rows, and each quad's staged input sums and cells.
__host__ __device__ constexpr int64_t forward_split_shared_bytes(int64_t S) {
  return (kSplitQuads * padded<float>(S * kQuadGates) + padded<float>(kSplitRows * S) +
          kSplitQuads * kSplitRows * (kQuadGates + kQuadStates)) *
         int64_t(sizeof(float));
}

// state_groups: the blocks along the states; the grid is state_groups times the groups of kSplitRows rows.
template <typename T>
__global__ void __launch_bounds__(kThreads, 1) forward_split(SequenceForwardTensors<T> p, int state_groups) {
  static_assert(std::is_same_v<T, float>, "the split forward's rows are staged as floats");
  constexpr int kForwardSums = ForwardLanes<kQuadStates, 1>::kSums;
  constexpr int R = kSplitRowsPerWarp;
  constexpr int kPack = rows_per_exchange(R, kForwardSums);
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int S = p.S;
  const int s0 = int(blockIdx.x) % state_groups * kSplitStates, b0 = int(blockIdx.x) / state_groups * kSplitRows;
  const int rows = min(kSplitRows, p.B - b0);
  const int64_t quad_weights = padded<T>(int64_t(S) * kQuadGates);
  T* w = reinterpret_cast<T*>(shared_bytes);     // per quad [S][kQuadGates], as the unsplit kernel's w
  T* staged_h = w + kSplitQuads * quad_weights;  // [kSplitRows][S]: h_{t-1} of the block's rows
  T* staged_in = staged_h + padded<T>(int64_t(kSplitRows) * S);  // per quad [kSplitRows][kQuadGates]
  T* staged_cell = staged_in + kSplitQuads * kSplitRows * kQuadGates;  // per quad [kSplitRows][kQuadStates]
  // States past S read state S - 1 instead, and their results are not stored.
  for (int e = threadIdx.x; e < kSplitQuads * S * kQuadGates; e += kThreads) {
    const int quad = e / (S * kQuadGates), k = e / kQuadGates % S, q = e % kQuadGates;
    w[quad * quad_weights + k * kQuadGates + q] =
        p.weights[q / kQuadStates * S + min(s0 + quad * kQuadStates + q % kQuadStates, S - 1)][k];
  }
  // Rows past B are never staged: zeros keep their unused sums finite.
  for (int e = rows * S + threadIdx.x; e < kSplitRows * S; e += kThreads) staged_h[e] = T(0);
  for (int e = threadIdx.x; e < rows * kSplitStates; e += kThreads)
    if (s0 + e % kSplitStates < S) save_h0(p, b0 + e / kSplitStates, s0 + e % kSplitStates);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int quad = warp / kSplitGroups, group = warp % kSplitGroups;
  const int quad_s0 = s0 + quad * kQuadStates, first = group * R;
  const T* quad_w = w + quad * quad_weights;
  T* quad_in = staged_in + quad * kSplitRows * kQuadGates;
  T* quad_cell = staged_cell + quad * kSplitRows * kQuadStates;
  // The bias of the sum a lane owns after an exchange of one row's sums, and after one of kPack rows'.
  auto bias_of = [&](auto lanes) { return lanes.owner ? p.bias[lanes.gate * S + lanes.s] : T(0); };
  const T bias = bias_of(ForwardLanes<kQuadStates, 1>(lane, quad_s0, S));
  const T packed_bias = bias_of(ForwardLanes<kQuadStates, kPack>(lane, quad_s0, S));
  // The block's own inputs of step t (no other block writes them): its
  // gates' x_t W_x^T, and its cells, written by their finisher lanes and
  // read back here by other threads after a barrier.
  auto stage_own = [&](int t) {
    for (int e = threadIdx.x; e < kSplitQuads * rows * kQuadGates; e += kThreads) {
      const int qd = e / (rows * kQuadGates), r = e / kQuadGates % rows, q = e % kQuadGates;
      staged_in[(qd * kSplitRows + r) * kQuadGates + q] =
          __ldg(p.gin + (int64_t(t) * p.B + b0 + r) * 3 * S + q / kQuadStates * S +
                min(s0 + qd * kQuadStates + q % kQuadStates, S - 1));
    }
    for (int e = threadIdx.x; e < kSplitQuads * rows * kQuadStates; e += kThreads) {
      const int qd = e / (rows * kQuadStates), r = e / kQuadStates % rows, j = e % kQuadStates;
      const int b = b0 + r, s = min(s0 + qd * kQuadStates + j, S - 1);
      staged_cell[(qd * kSplitRows + r) * kQuadStates + j] = t == 0 ? p.c0[b][s] : __ldcg(p.cell + int64_t(b) * S + s);
    }
  };
  stage_own(0);
  cg::grid_group grid = cg::this_grid();
  for (int t = 0; t < p.steps; ++t) {
    if (t == 0)
      for (int e = threadIdx.x; e < rows * S; e += kThreads) staged_h[e] = p.h0[b0 + e / S][e % S];
    else
      stage(staged_h, p.h_of(t - 1) + int64_t(b0) * S, int64_t(rows) * S);
    stage_wait();
    __syncthreads();
    // This warp's rows: a group of R where all R are rows of the batch, else one at a time.
    if (first + R <= rows)
      forward_rows<R, kQuadStates, kPack>(p, t, b0, first, quad_w, staged_h, quad_in, quad_cell, quad_s0, lane, bias,
                                          packed_bias);
    else
      for (int row = first; row < rows; ++row)
        forward_rows<1, kQuadStates, kPack>(p, t, b0, row, quad_w, staged_h, quad_in, quad_cell, quad_s0, lane, bias,
                                            packed_bias);
    // Step t's h is complete in memory before any block reads it. While the
    // other blocks finish theirs, this one stages its own inputs of step t + 1.
    if (t + 1 < p.steps) {
      auto token = grid.barrier_arrive();
      stage_own(t + 1);
      grid.barrier_wait(std::move(token));
    }
  }
}

}  // namespace lltm::cuda::persistent
