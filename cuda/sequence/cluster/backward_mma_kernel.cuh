// The cluster recurrence's backward on the tensor cores, in the clusters of
// the forward's (forward_mma_kernel.cuh: kMmaRows rows a cluster, kMmaStates
// states a block). Each step a thread per cell computes its gate gradients
// into the block's tile of them ([kMmaRows, 3 kMmaStates]) in shared memory;
// the tile times the block's 3 kMmaStates rows of W_h is the block's share of
// dh_{t-1} for every state of its rows. Warp q computes the share of block
// q's states and sends it there (st.async of its fragments, counted on that
// block's mbarrier), and each cell adds the shares of the cluster's blocks in
// rank order, so the results do not vary between runs. The shares never
// leave the cluster: no grid barrier, no trip through L2. A warp's B
// fragments of W_h stay in registers for the whole sequence where they fit
// (bfloat16), else the first pairs of depth tiles do and the rest are read
// from shared memory.
#pragma once

#include <cooperative_groups.h>

#include "sequence/cell.cuh"
#include "sequence/cluster/forward_mma_kernel.cuh"
#include "sequence/cluster/messaging.cuh"
#include "sequence/persistent/tensor_core.cuh"

namespace lltm::cuda::cluster {

constexpr int kMmaShareTiles = kMmaStates / persistent::kMmaCols;           // a warp's n8 tiles: one block's states
constexpr int kMmaGatePairs = kMmaGateColumns / persistent::kPairDepth;     // the gate tile's depth, in pairs
// A row of the gate tile: 16 floats past the columns, so that rows g and g + 1, which a quarter-warp's
// 16-byte A loads read together, fall on different banks.
constexpr int kMmaGateStride = kMmaGateColumns + 16;
constexpr int kMmaGateTileFloats = kMmaRows * kMmaGateStride;
// The same gradients gate-major, for a gate-major dG: column n's kMmaRows rows
// one after the other, one float past them, so that a warp's cells (32 columns
// of one row) write to distinct banks and a read of two columns' rows meets
// at most two in one bank (the row-major tile's stride puts 8 there).
constexpr int kMmaGateMajorStride = kMmaRows + 1;
constexpr int kMmaGateMajorFloats = kMmaGateColumns * kMmaGateMajorStride;
static_assert(kMmaGateColumns % persistent::kPairDepth == 0, "the gate tile is whole pairs of depth tiles");

// How a warp's B fragments are kept: the first kRegisterPairs of the gate
// tile's kMmaGatePairs pairs in 48 registers a thread, the rest in shared memory.
template <typename Products>
struct MmaShareSplit {
  static constexpr int kRegisterPairs = 48 / (kMmaShareTiles * Products::kWords) < kMmaGatePairs
                                            ? 48 / (kMmaShareTiles * Products::kWords)
                                            : kMmaGatePairs;
  static constexpr int kSharedPairs = kMmaGatePairs - kRegisterPairs;
  // A warp's words in shared memory: [kSharedPairs][kMmaShareTiles][kWarp][kWords].
  static constexpr int kWarpWords = kSharedPairs * kMmaShareTiles * kWarp * Products::kWords;
};

// The dynamic shared memory of a block at S states: the shared part of W_h,
// two gate tiles (a step's while the next is written) in both layouts, two
// slots of every block's share.
template <typename Products>
constexpr int64_t backward_mma_shared_bytes(int64_t S) {
  return int64_t(kMmaWarps) * MmaShareSplit<Products>::kWarpWords * 4 +
         (2 * int64_t(kMmaGateTileFloats + kMmaGateMajorFloats) + 2 * int64_t(mma_blocks(S)) * kMmaTileFloats) *
             int64_t(sizeof(float));
}

// The grid: (blocks a cluster, clusters), as the forward's.
template <typename Products>
__global__ void __launch_bounds__(kMmaThreads, 1) backward_cluster_mma(SequenceBackwardTensors<float> p) {
  // Clusters exist from sm_90 on; the plan never launches this on an older device, whose build of it is empty.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  using Split = MmaShareSplit<Products>;
  using persistent::kMmaCols;
  constexpr int kWords = Products::kWords;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  __shared__ __align__(8) uint64_t arrived[2];
  const cg::cluster_group cluster = cg::this_cluster();
  const int blocks = int(cluster.num_blocks()), rank = int(cluster.block_rank());
  const int S = p.S, s0 = rank * kMmaStates, b0 = int(blockIdx.y) * kMmaRows, rows = min(kMmaRows, p.B - b0);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  uint32_t* shared_w = reinterpret_cast<uint32_t*>(shared_bytes) + warp * Split::kWarpWords;
  float* gates = reinterpret_cast<float*>(shared_bytes) + kMmaWarps * Split::kWarpWords;  // [2] gate tiles
  float* gate_major = gates + 2 * kMmaGateTileFloats;  // [2] tiles [kMmaGateColumns][kMmaGateMajorStride]
  float* shares = gate_major + 2 * kMmaGateMajorFloats;  // [2][blocks] tiles [kMmaRows][kMmaStates]

  // Warp q < blocks computes block q's share: column n of its tile n8 `tile`
  // is state q kMmaStates + tile kMmaCols + lane / 4; depth k of the gate
  // tile is gate k / kMmaStates of state s0 + k % kMmaStates (zero past S).
  const bool shares_out = warp < blocks;
  auto load_b = [&](int pair, int tile, uint32_t(&words)[kWords]) {
    const int n = warp * kMmaStates + tile * kMmaCols + lane / 4;
    Products::load_b(
        [&](int k) {
          const int s = s0 + k % kMmaStates;
          return n < S && s < S ? float(p.weights[k / kMmaStates * S + s][n]) : 0.0f;
        },
        pair, lane, words);
  };
  auto shared_words = [&](int pair, int tile) {
    return shared_w + (((pair - Split::kRegisterPairs) * kMmaShareTiles + tile) * kWarp + lane) * kWords;
  };
  uint32_t w[Split::kRegisterPairs][kMmaShareTiles][kWords] = {};
  if (shares_out) {
#pragma unroll
    for (int pair = 0; pair < Split::kRegisterPairs; ++pair)
#pragma unroll
      for (int tile = 0; tile < kMmaShareTiles; ++tile) load_b(pair, tile, w[pair][tile]);
#pragma unroll
    for (int pair = Split::kRegisterPairs; pair < kMmaGatePairs; ++pair)
#pragma unroll
      for (int tile = 0; tile < kMmaShareTiles; ++tile) {
        uint32_t words[kWords];
        load_b(pair, tile, words);
#pragma unroll
        for (int q = 0; q < kWords; ++q) shared_words(pair, tile)[q] = words[q];
      }
  }
  // The gate tiles' rows and states with no cell stay zero.
  for (int e = threadIdx.x; e < 2 * kMmaGateTileFloats; e += kMmaThreads) gates[e] = 0.0f;
  // Step i of the pass (t = T - 1 - i) waits in slot i % 2 for every block's share of that same step.
  const uint32_t barriers = shared_address(arrived), bytes = uint32_t(blocks) * kMmaTileBytes;
  if (threadIdx.x == 0) init_receipt_barriers(barriers, 0, p.steps, bytes);
  // A thread's cell (row r, state j of the block): its saved values a step
  // ahead, its sample's length, and the gradients reaching its h and cell
  // from later steps (from outside the sequence at the last).
  const int r = threadIdx.x / kMmaStates, j = threadIdx.x % kMmaStates;
  const int cell_b = b0 + r, cell_s = s0 + j;
  const bool has_cell = r < rows && cell_s < S;
  SavedCell<float> ahead = has_cell ? load_saved(p, p.steps - 1, cell_b, cell_s) : SavedCell<float>{};
  const int length = has_cell ? p.lengths.of(cell_b, p.steps) : p.steps;
  const float grad_last_h = has_cell ? last_grad_h(p, cell_b, cell_s) : 0.0f;
  float dh = 0.0f, dc = has_cell ? last_grad_cell(p, cell_b, cell_s) : 0.0f;
  float bias_sums[3] = {};  // the cell's gate gradients summed over the steps
  const uint32_t shares_at = shared_address(shares);
  // Every block of the cluster has started (its shared memory and barriers exist).
  cluster.sync();
  for (int i = 0; i < p.steps; ++i) {
    const int t = p.steps - 1 - i, slot = i & 1;
    float* tile = gates + slot * kMmaGateTileFloats;
    float* tile_by_gate = gate_major + slot * kMmaGateMajorFloats;
    if (has_cell) {
      const CellGradients<float> d = sample_gradients(ahead, t, length, dh, dc, t + 1 == length ? grad_last_h : 0.0f);
      dc = d.d_cell;
      bias_sums[0] += d.d0;
      bias_sums[1] += d.d1;
      bias_sums[2] += d.d2;
      float* row = tile + r * kMmaGateStride + j;
      row[0] = d.d0;
      row[kMmaStates] = d.d1;
      row[2 * kMmaStates] = d.d2;
      if (p.dG_by_gate) {
        float* column = tile_by_gate + j * kMmaGateMajorStride + r;
        column[0] = d.d0;
        column[kMmaStates * kMmaGateMajorStride] = d.d1;
        column[2 * kMmaStates * kMmaGateMajorStride] = d.d2;
      } else {
        float* dg = p.dG + (int64_t(t) * p.B + cell_b) * 3 * S + cell_s;
        dg[0] = d.d0;
        dg[S] = d.d1;
        dg[2 * S] = d.d2;
      }
      if (t == 0) p.d_c0[cell_b][cell_s] = d.d_cell;
      if (t > 0) ahead = load_saved(p, t - 1, cell_b, cell_s);
    }
    // The tile is complete. The other one, which the next step writes, was
    // last read before this barrier (the step before's products).
    __syncthreads();
    if (shares_out) {
      auto gate_row4 = [&](int row, int k) {
        return *reinterpret_cast<const float4*>(tile + row * kMmaGateStride + k);
      };
      float acc[kMmaShareTiles][4] = {};
      auto multiply = [&](int pair, auto&& b_words) {
        typename Products::A a;
        Products::load_a(gate_row4, pair, lane, a);
#pragma unroll
        for (int n = 0; n < kMmaShareTiles; ++n) Products::mma(acc[n], a, b_words(n));
      };
#pragma unroll
      for (int pair = 0; pair < Split::kRegisterPairs; ++pair)
        multiply(pair, [&](int n) -> const uint32_t(&)[kWords] { return w[pair][n]; });
#pragma unroll
      for (int pair = Split::kRegisterPairs; pair < kMmaGatePairs; ++pair) {
        uint32_t words[kMmaShareTiles][kWords];
#pragma unroll
        for (int n = 0; n < kMmaShareTiles; ++n)
#pragma unroll
          for (int q = 0; q < kWords; ++q) words[n][q] = shared_words(pair, n)[q];
        multiply(pair, [&](int n) -> const uint32_t(&)[kWords] { return words[n]; });
      }
      // To block `warp`'s slot of this block's share: rows g and g + 8, states 2c and 2c + 1 of each tile n8.
      const uint32_t to = cluster_address(shares_at + uint32_t((slot * blocks + rank) * kMmaTileBytes), warp);
      const uint32_t barrier = cluster_address(barriers + 8 * slot, warp);
#pragma unroll
      for (int n = 0; n < kMmaShareTiles; ++n)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = lane / 4 + 8 * half, state = n * kMmaCols + 2 * (lane % 4);
          send(to + uint32_t((row * kMmaStates + state) * int(sizeof(float))), acc[n][2 * half], acc[n][2 * half + 1],
               barrier);
        }
    }
    if (p.dG_by_gate) {
      // The gate-major tile out (column n's rows are consecutive in dG too),
      // once the shares are on their way: nothing waits for it. The tile is
      // next written two steps on, after the next step's block barrier.
      const int64_t gate_stride = int64_t(p.steps) * p.B, row0 = int64_t(t) * p.B + b0;
      for (int e = threadIdx.x; e < kMmaGateColumns * kMmaRows; e += kMmaThreads) {
        const int n = e / kMmaRows, b = e % kMmaRows, s = s0 + n % kMmaStates;
        if (b < rows && s < S)
          p.dG[(n / kMmaStates * S + s) * gate_stride + row0 + b] = tile_by_gate[n * kMmaGateMajorStride + b];
      }
    }
    // Every block's share of dh_{t-1} for this block's states. The slot is
    // next written two steps on, by blocks that have by then received this
    // block's share of the step after, which it sends only after the sums below.
    receive(barriers, 0, i, p.steps, bytes);
    if (has_cell) {
      const float* mine = shares + slot * blocks * kMmaTileFloats + r * kMmaStates + j;
      float sum = mine[0];
      for (int q = 1; q < blocks; ++q) sum += mine[q * kMmaTileFloats];
      if (t > 0)
        dh = sum;
      else
        p.d_h0[cell_b][cell_s] = sum;
    }
  }
  if (has_cell && p.bias_rows != nullptr) {
    float* row = p.bias_rows + int64_t(cell_b) * 3 * S + cell_s;
#pragma unroll
    for (int q = 0; q < 3; ++q) row[q * S] = bias_sums[q];
  }
#endif
}

}  // namespace lltm::cuda::cluster
