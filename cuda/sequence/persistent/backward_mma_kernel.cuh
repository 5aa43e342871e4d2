// The persistent backward on the tensor cores (tensor_core.cuh), where
// float32 products may round to TF32 or bfloat16: forward_mma's work split
// (a block owns kSplitStates states of kTiles m16 tiles of rows; a thread per cell computes
// its gate gradients, then its dh, so that the dh and dc it writes in one
// step it reads itself in the next). The product dh_{t-1} = dG_t W_h is
// split by the gates instead of by the states: each block multiplies the
// gate gradients it has just computed (its rows by its states' 3 gates, a
// tile of 48 columns kept in shared memory) by the 48 matching rows of W_h, its
// share of dh_{t-1} for every state of its rows, and writes the share out;
// after the grid barrier each cell adds up the shares of the blocks of its
// rows, in block order, so the results do not vary between runs. A step so
// reads its rows' S shares a block instead of their 3S gate gradients. Each
// warp keeps its column tiles of the 48 W_h rows as B fragments in
// registers for the whole sequence (S up to the products' kMaxState).
#pragma once

#include <cooperative_groups.h>

#include <type_traits>

#include "sequence/cell.cuh"
#include "sequence/persistent/forward_mma_kernel.cuh"
#include "sequence/persistent/tensor_core.cuh"

namespace lltm::cuda::persistent {

namespace cg = cooperative_groups;

constexpr int kMmaGatePairs = 3 * kSplitStates / kPairDepth;  // the block's 48 gate gradients, as pairs of depth tiles
constexpr int kMmaGateStride = 3 * kSplitStates + 4;          // a row of the gate-gradient tile in shared memory
constexpr int kShareBatch = 16;                                 // the shares of dh a cell loads at once
static_assert(3 * kSplitStates % kPairDepth == 0, "the block's gates are whole pairs of depth tiles");

// The backward's shared memory at kTiles tiles of rows: the gate-gradient tile.
constexpr int64_t backward_mma_shared_bytes(int tiles) {
  return int64_t(tiles) * kMmaRows * kMmaGateStride * sizeof(float);
}

// The shares of dh a pass writes: [2][state_groups][B][S] floats, step t's in half t % 2.
inline int64_t backward_share_floats(int64_t state_groups, int64_t B, int64_t S) { return 2 * state_groups * B * S; }

// state_groups: the blocks along the states; the grid is state_groups times
// the groups of kTiles kMmaRows rows. shares: backward_share_floats.
template <typename T, typename Products, int kTiles>
__global__ void __launch_bounds__(kThreads, 1) backward_mma(SequenceBackwardTensors<T> p, float* shares,
                                                            int state_groups) {
  static_assert(std::is_same_v<T, float>, "the tensor cores' products take float32 operands here");
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  // A warp's column tiles of dh, kWords registers each per pair of gate depths (48 a thread for TF32, 24 for bfloat16).
  constexpr int kShareTiles = Products::kMaxState / kMmaCols / kWarps;
  constexpr int kRows = kTiles * kMmaRows;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  float* gates = reinterpret_cast<float*>(shared_bytes);  // [kRows][kMmaGateStride]: the block's dG_t
  const int S = p.S;
  const int group = int(blockIdx.x) % state_groups;
  const int s0 = group * kSplitStates, b0 = int(blockIdx.x) / state_groups * kRows;
  const int rows = min(kRows, p.B - b0);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  // Depth k of the tile is gate k / kSplitStates of state s0 + k % kSplitStates
  // (zero past S); column tile warp + i kWarps of dh is this warp's i-th.
  uint32_t w[kShareTiles][kMmaGatePairs][Products::kWords];
#pragma unroll
  for (int i = 0; i < kShareTiles; ++i) {
    const int n = (warp + i * kWarps) * kMmaCols + lane / 4;
#pragma unroll
    for (int pair = 0; pair < kMmaGatePairs; ++pair) {
      Products::load_b(
          [&](int k) {
            const int s = s0 + k % kSplitStates;
            return n < S && s < S ? float(p.weights[k / kSplitStates * S + s][n]) : 0.0f;
          },
          pair, lane, w[i][pair]);
    }
  }
  // The tile's rows and states with no cell stay zero.
  for (int e = threadIdx.x; e < kRows * kMmaGateStride; e += kThreads) gates[e] = 0.0f;
  __syncthreads();
  const int r = threadIdx.x / kSplitStates, j = threadIdx.x % kSplitStates;
  const int cell_b = b0 + r, cell_s = s0 + j;
  const bool has_cell = r < rows && cell_s < S;
  SavedCell<T> ahead = has_cell ? load_saved(p, p.steps - 1, cell_b, cell_s) : SavedCell<T>{};
  const int64_t plane = int64_t(p.B) * S;
  const bool pairs_aligned = S % 2 == 0;
  cg::grid_group grid = cg::this_grid();
  for (int t = p.steps - 1; t >= 0; --t) {
    if (has_cell) {
      const CellGradients<T> d = backward_cell(p, t, cell_b, cell_s, ahead);
      float* row = gates + r * kMmaGateStride + j;
      row[0] = d.d0;
      row[kSplitStates] = d.d1;
      row[2 * kSplitStates] = d.d2;
      if (t > 0) ahead = load_saved(p, t - 1, cell_b, cell_s);
    }
    __syncthreads();
    if (p.dG_by_gate) {
      // The tile out gate-major: column n's rows are consecutive there.
      const int64_t gate_stride = int64_t(p.steps) * p.B, row0 = int64_t(t) * p.B + b0;
      for (int e = threadIdx.x; e < 3 * kSplitStates * kRows; e += kThreads) {
        const int n = e / kRows, row = e % kRows, s = s0 + n % kSplitStates;
        if (row < rows && s < S)
          p.dG[(n / kSplitStates * S + s) * gate_stride + row0 + row] = gates[row * kMmaGateStride + n];
      }
    }
    // This block's share, one tile of rows after the other: rows g and g + 8
    // of the tile, columns 2c and 2c + 1 of each of the warp's column tiles.
    float* share = shares + (int64_t(t & 1) * state_groups + group) * plane + int64_t(b0) * S;
#pragma unroll 1
    for (int m = 0; m < kTiles; ++m) {
      auto gate_row4 = [&](int row, int k) {
        return *reinterpret_cast<const float4*>(gates + (m * kMmaRows + row) * kMmaGateStride + k);
      };
      float acc[kShareTiles][4] = {};
#pragma unroll
      for (int pair = 0; pair < kMmaGatePairs; ++pair) {
        typename Products::A a;
        Products::load_a(gate_row4, pair, lane, a);
#pragma unroll
        for (int i = 0; i < kShareTiles; ++i) Products::mma(acc[i], a, w[i][pair]);
      }
#pragma unroll
      for (int i = 0; i < kShareTiles; ++i) {
        const int n = (warp + i * kWarps) * kMmaCols + 2 * (lane % 4);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = m * kMmaRows + lane / 4 + 8 * half;
          float* at = share + int64_t(row) * S + n;
          if (row >= rows || n >= S) continue;
          if (pairs_aligned) {
            __stcg(reinterpret_cast<float2*>(at), make_float2(acc[i][2 * half], acc[i][2 * half + 1]));
          } else {
            __stcg(at, acc[i][2 * half]);
            if (n + 1 < S) __stcg(at + 1, acc[i][2 * half + 1]);
          }
        }
      }
    }
    // Every block's share of step t is in memory before any block adds them
    // up. The tile is next written after this barrier, when every reader of
    // this step is done with it; a half of the shares two steps later, after
    // another barrier that every reader of this one has passed.
    grid.sync();
    if (has_cell) {
      const float* mine = shares + int64_t(t & 1) * state_groups * plane + int64_t(cell_b) * S + cell_s;
      // kShareBatch shares loaded before any is added, so that their trips through L2 overlap; added in block order.
      float sum = 0.0f;
      for (int g0 = 0; g0 < state_groups; g0 += kShareBatch) {
        float share[kShareBatch];
#pragma unroll
        for (int g = 0; g < kShareBatch; ++g) share[g] = g0 + g < state_groups ? __ldcg(mine + (g0 + g) * plane) : 0.0f;
#pragma unroll
        for (int g = 0; g < kShareBatch; ++g)
          if (g0 + g < state_groups) sum = g0 + g == 0 ? share[g] : sum + share[g];
      }
      if (t > 0)
        p.dh[int64_t(cell_b) * S + cell_s] = sum;
      else
        p.d_h0[cell_b][cell_s] = sum;
    }
  }
#endif
}

}  // namespace lltm::cuda::persistent
