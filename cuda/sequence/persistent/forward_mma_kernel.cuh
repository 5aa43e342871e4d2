// The persistent forward on the tensor cores (tensor_core.cuh), where float32
// products may round to TF32 or bfloat16. A block owns kSplitStates states
// of kTiles m16 tiles of rows (one, or two where one would need more blocks
// than the GPU holds), so each step's product is its rows of h_{t-1} times
// the 3 kSplitStates gate rows of W_h: an m16 tile per 8 gate columns. Its
// warps split the depth S between them, each keeping its slice of W_h as B
// fragments in registers for the whole sequence (S up to the products'
// kMaxState) and reading its slice of h_{t-1} straight into A fragments, and
// add their partial tiles in warp order through shared memory, so the
// results do not vary between runs. A thread per cell then finishes the
// step, keeping its cell in a register.
#pragma once

#include <cooperative_groups.h>

#include <type_traits>

#include "sequence/cell.cuh"
#include "sequence/persistent/backward_split_kernel.cuh"
#include "sequence/persistent/tensor_core.cuh"
#include "sequence/persistent/work_split.cuh"

namespace lltm::cuda::persistent {

// A block's m16 tiles of rows: one, or two (a thread per cell of kSplitStates states of 32 rows).
constexpr int kMmaMaxTiles = kThreads / (kMmaRows * kSplitStates);
constexpr int kMmaGateTiles = 3 * kSplitStates / kMmaCols;
// A partial tile row's stride: even for the 8-byte stores, 4 banks past the 3 kSplitStates columns.
constexpr int kMmaForwardPartialStride = 3 * kSplitStates + 4;
static_assert(kMmaMaxTiles == 2, "a thread per cell of two tiles of rows");

// The forward's shared memory at kTiles tiles of rows: the warps' partial tiles.
constexpr int64_t forward_mma_shared_bytes(int tiles) {
  return int64_t(kWarps) * tiles * kMmaRows * kMmaForwardPartialStride * sizeof(float);
}

// state_groups: the blocks along the states; the grid is state_groups times the groups of kTiles kMmaRows rows.
template <typename T, typename Products, int kTiles>
__global__ void __launch_bounds__(kThreads, 1) forward_mma(SequenceForwardTensors<T> p, int state_groups) {
  static_assert(std::is_same_v<T, float>, "the tensor cores' products take float32 operands here");
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  // A warp's pairs of depth tiles, kWords registers each per column tile (48 a thread for TF32, 24 for bfloat16).
  constexpr int kPairs = Products::kMaxState / kPairDepth / kWarps;
  constexpr int kRows = kTiles * kMmaRows;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  float* partial = reinterpret_cast<float*>(shared_bytes);  // [kWarps][kRows][kMmaForwardPartialStride]
  const int S = p.S;
  const int s0 = int(blockIdx.x) % state_groups * kSplitStates, b0 = int(blockIdx.x) / state_groups * kRows;
  const int rows = min(kRows, p.B - b0), pairs = mma_pairs(S);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  // Column n of the block's gate tiles is gate n / kSplitStates of state s0 + n % kSplitStates (past S: S - 1's,
  // not stored); pair warp + i kWarps of the depth tiles is this warp's i-th.
  uint32_t w[kPairs][kMmaGateTiles][Products::kWords];
#pragma unroll
  for (int i = 0; i < kPairs; ++i) {
#pragma unroll
    for (int n = 0; n < kMmaGateTiles; ++n) {
      const int column = n * kMmaCols + lane / 4;
      const auto row = p.weights[column / kSplitStates * S + min(s0 + column % kSplitStates, S - 1)];
      Products::load_b([&](int k) { return k < S ? float(row[k]) : 0.0f; }, warp + i * kWarps, lane, w[i][n]);
    }
  }
  // A thread's cell (row r, state j of the block): its bias, its input sums one step ahead (added only where the
  // gates need them, so that nothing waits for their loads before then), its cell.
  const int r = threadIdx.x / kSplitStates, j = threadIdx.x % kSplitStates;
  const int cell_b = b0 + r, cell_s = s0 + j;
  const bool has_cell = r < rows && cell_s < S;
  float bias[3] = {}, in[3] = {}, cell = 0.0f;
  auto load_in = [&](int t) {
    const float* g = p.gin + (int64_t(t) * p.B + cell_b) * 3 * S + cell_s;
#pragma unroll
    for (int q = 0; q < 3; ++q) in[q] = __ldg(g + q * S);
  };
  if (has_cell) {
#pragma unroll
    for (int q = 0; q < 3; ++q) bias[q] = p.bias[q * S + cell_s];
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
    // One tile of rows after the other, so that only one tile's sums take registers.
#pragma unroll 1
    for (int m = 0; m < kTiles; ++m) {
      auto h_row4 = [&](int row, int k) {
        row += m * kMmaRows;
        return row < rows ? row_floats(h + int64_t(row) * S, k, S, vector) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      };
      float acc[kMmaGateTiles][4] = {};
#pragma unroll
      for (int i = 0; i < kPairs; ++i) {
        const int pair = warp + i * kWarps;
        if (pair < pairs) {
          typename Products::A a;
          Products::load_a(h_row4, pair, lane, a);
#pragma unroll
          for (int n = 0; n < kMmaGateTiles; ++n) Products::mma(acc[n], a, w[i][n]);
        }
      }
      float* mine = partial + (warp * kRows + m * kMmaRows) * kMmaForwardPartialStride;
#pragma unroll
      for (int n = 0; n < kMmaGateTiles; ++n) store_tile(mine + n * kMmaCols, kMmaForwardPartialStride, lane, acc[n]);
    }
    __syncthreads();
    if (has_cell) {
      float g[3];
#pragma unroll
      for (int q = 0; q < 3; ++q) {
        g[q] = sum_partials<kWarps>(partial, r * kMmaForwardPartialStride + q * kSplitStates + j,
                                    kRows * kMmaForwardPartialStride) +
               (in[q] + bias[q]);
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
