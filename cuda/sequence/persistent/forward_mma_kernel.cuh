// The persistent forward on the tensor cores (tensor_core.cuh), where float32
// products may round to TF32. A block owns kSplitStates states of
// kSplitRows rows, as forward_split, so each step's product is its 16 rows
// of h_{t-1} times the 3 kSplitStates gate rows of W_h: an m16 tile per 8
// gate columns. Its warps split the depth S between them, each keeping its
// slice of W_h as B fragments in registers for the whole sequence (S up to
// kMmaMaxState) and reading its slice of h_{t-1} straight into A
// fragments, and add their partial tiles in warp order through shared
// memory, so the results do not vary between runs. A thread per cell then
// finishes the step, keeping its cell in a register.
#pragma once

#include <cooperative_groups.h>

#include <type_traits>

#include "sequence/cell.cuh"
#include "sequence/persistent/backward_split_kernel.cuh"
#include "sequence/persistent/tensor_core.cuh"
#include "sequence/persistent/work_split.cuh"

namespace lltm::cuda::persistent {

// The most states whose W_h slices the tensor-core kernels keep in registers:
// in the forward kMmaForwardPairs pairs of depth tiles a warp by
// kMmaGateTiles column tiles (in the backward kMmaShareTiles column tiles by
// its 3 pairs), two registers each, 48 registers a thread.
constexpr int kMmaMaxState = 512;
constexpr int kMmaGateTiles = 3 * kSplitStates / kMmaCols;
constexpr int kMmaForwardPairs = kMmaMaxState / kPairDepth / kWarps;
// A partial tile row's stride: even for the 8-byte stores, 4 banks past the 3 kSplitStates columns.
constexpr int kMmaForwardPartialStride = 3 * kSplitStates + 4;
static_assert(kSplitRows == kMmaRows, "a block's rows are one m16 tile");
static_assert(kSplitRows * kSplitStates <= kThreads, "a thread per cell of the block");

constexpr int64_t kForwardMmaSharedBytes = int64_t(kWarps) * kSplitRows * kMmaForwardPartialStride * sizeof(float);

// state_groups: the blocks along the states; the grid is state_groups times the groups of kSplitRows rows.
template <typename T>
__global__ void __launch_bounds__(kThreads, 1) forward_mma(SequenceForwardTensors<T> p, int state_groups) {
  static_assert(std::is_same_v<T, float>, "TF32 products take float32 operands");
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  float* partial = reinterpret_cast<float*>(shared_bytes);  // [kWarps][kSplitRows][kMmaForwardPartialStride]
  const int S = p.S;
  const int s0 = int(blockIdx.x) % state_groups * kSplitStates, b0 = int(blockIdx.x) / state_groups * kSplitRows;
  const int rows = min(kSplitRows, p.B - b0), pairs = mma_pairs(S);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  // Column n of the block's gate tiles is gate n / kSplitStates of state s0 + n % kSplitStates (past S: S - 1's,
  // not stored); pair warp + i kWarps of the depth tiles is this warp's i-th.
  uint32_t w[kMmaForwardPairs][2][kMmaGateTiles][2];
#pragma unroll
  for (int i = 0; i < kMmaForwardPairs; ++i) {
#pragma unroll
    for (int tile = 0; tile < 2; ++tile) {
#pragma unroll
      for (int n = 0; n < kMmaGateTiles; ++n) {
        const int column = n * kMmaCols + lane / 4, k = pair_depth(warp + i * kWarps, tile, lane);
        const auto row = p.weights[column / kSplitStates * S + min(s0 + column % kSplitStates, S - 1)];
        w[i][tile][n][0] = k < S ? to_tf32(row[k]) : 0u;
        w[i][tile][n][1] = k + 1 < S ? to_tf32(row[k + 1]) : 0u;
      }
    }
  }
  // A thread's cell (row r, state j of the block): its input sums with the bias one step ahead, its cell.
  const int r = threadIdx.x / kSplitStates, j = threadIdx.x % kSplitStates;
  const int cell_b = b0 + r, cell_s = s0 + j;
  const bool has_cell = r < rows && cell_s < S;
  float in[3] = {}, cell = 0.0f;
  auto load_in = [&](int t) {
    const float* g = p.gin + (int64_t(t) * p.B + cell_b) * 3 * S + cell_s;
#pragma unroll
    for (int q = 0; q < 3; ++q) in[q] = __ldg(g + q * S) + p.bias[q * S + cell_s];
  };
  if (has_cell) {
    load_in(0);
    cell = p.c0[cell_b][cell_s];
    // h0 where step 0 reads the h before it, so that every step reads a
    // contiguous [B, S] h (the saved h plane's step 0, or the free slot of
    // the inference buffer).
    p.h_of(-1)[int64_t(cell_b) * S + cell_s] = p.h0[cell_b][cell_s];
  }
  const bool vector = S % 4 == 0;
  cg::grid_group grid = cg::this_grid();
  grid.sync();
  for (int t = 0; t < p.steps; ++t) {
    const float* h = p.h_of(t - 1) + int64_t(b0) * S;
    auto h_row4 = [&](int row, int k) {
      return row < rows ? row_floats(h + int64_t(row) * S, k, S, vector) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    };
    float acc[kMmaGateTiles][4] = {};
#pragma unroll
    for (int i = 0; i < kMmaForwardPairs; ++i) {
      const int pair = warp + i * kWarps;
      if (pair < pairs) {
        AFragment a[2];
        load_a_pair(h_row4, pair, lane, a);
#pragma unroll
        for (int tile = 0; tile < 2; ++tile)
#pragma unroll
          for (int n = 0; n < kMmaGateTiles; ++n) mma_tf32(acc[n], a[tile], w[i][tile][n][0], w[i][tile][n][1]);
      }
    }
    float* mine = partial + warp * kSplitRows * kMmaForwardPartialStride;
#pragma unroll
    for (int n = 0; n < kMmaGateTiles; ++n) store_tile(mine + n * kMmaCols, kMmaForwardPartialStride, lane, acc[n]);
    __syncthreads();
    if (has_cell) {
      float g[3];
#pragma unroll
      for (int q = 0; q < 3; ++q) {
        g[q] = sum_partials<kWarps>(partial, r * kMmaForwardPartialStride + q * kSplitStates + j,
                                    kSplitRows * kMmaForwardPartialStride) +
               in[q];
        if (p.reserve != nullptr) p.plane(kPlaneGate0 + q, t)[int64_t(cell_b) * S + cell_s] = g[q];
      }
      cell = finish_cell(p, t, cell_b, cell_s, sigmoid(g[0]), sigmoid(g[1]), elu(g[2]), cell).cell;
    }
    // Step t's h is complete in memory before any block reads it; the next
    // input sums load while the other blocks finish. The partial tiles are
    // next written after this barrier, when every reader of this step is
    // done with them.
    if (t + 1 < p.steps) {
      auto token = grid.barrier_arrive();
      if (has_cell) load_in(t + 1);
      grid.barrier_wait(std::move(token));
    }
  }
#endif
}

}  // namespace lltm::cuda::persistent
