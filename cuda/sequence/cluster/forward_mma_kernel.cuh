// The cluster recurrence's forward on the tensor cores, where float32
// products may round to TF32 or bfloat16 (persistent/tensor_core.cuh). A
// cluster of up to 16 blocks owns kMmaRows batch rows and every state: block
// `rank` computes the 3 kMmaStates gate columns of its states, so each step's
// h reaches every block of the cluster by a bulk copy into its shared memory
// (messaging.cuh) instead of through L2 and a grid-wide barrier. Clusters
// never wait for each other.
//
// A block's warps split its [kMmaRows, 3 kMmaStates] product of each step
// into kColumnGroups groups of gate columns by kDepthGroups slices of the
// depth S (MmaWeightSplit), and add the slices' partial tiles in slice order
// through shared memory, so the results do not vary between runs. A warp's B
// fragments of W_h are read once: the first kRegisterPairs pairs of depth
// tiles stay in registers for the whole sequence, the rest in shared memory
// (TF32 takes twice bfloat16's words, more than the registers hold beside the
// sums). A thread per cell then finishes the step and writes its h into the
// block's tile of h ([kMmaRows, kMmaStates]), which goes whole to every block
// of the cluster as one bulk copy each.
#pragma once

#include <cooperative_groups.h>

#include "sequence/cell.cuh"
#include "sequence/cluster/messaging.cuh"
#include "sequence/persistent/tensor_core.cuh"

namespace lltm::cuda::cluster {

namespace cg = cooperative_groups;

constexpr int kMmaThreads = 512;
constexpr int kMmaWarps = kMmaThreads / kWarp;
constexpr int kMmaRows = persistent::kMmaRows;  // a cluster's batch rows: one m16 tile
constexpr int kMmaStates = 32;                  // a block's states: a thread per cell
constexpr int kMmaGateColumns = 3 * kMmaStates;
// A partial tile's row: 8 banks past the columns, so that store_tile's float2 stores of a half-warp miss each other.
constexpr int kMmaPartialStride = kMmaGateColumns + 8;
static_assert(kMmaRows * kMmaStates == kMmaThreads, "a thread per cell");

// How a block's warps split its product, for Products' kWords words a B
// fragment: kColumnGroups groups of gate columns (kWarpTiles n8 tiles a warp)
// by kDepthGroups slices of S. bfloat16 takes 2 groups of columns: its
// fragments of W_h still fit in registers beside twice the sums, and half as
// many dependent products a step end in each sum. TF32's would spill there.
// A warp's kPairs pairs of depth tiles (its slice of S up to kMaxState) are
// kept the first kRegisterPairs in 48 registers a thread, the rest in shared memory.
template <typename Products>
struct MmaWeightSplit {
  static constexpr int kColumnGroups = Products::kWords == 2 ? 2 : 4;
  static constexpr int kDepthGroups = kMmaWarps / kColumnGroups;
  static constexpr int kWarpTiles = kMmaGateColumns / persistent::kMmaCols / kColumnGroups;
  static_assert(kWarpTiles * persistent::kMmaCols * kColumnGroups == kMmaGateColumns, "whole n8 tiles a warp");
  static constexpr int kPairs = Products::kMaxState / persistent::kPairDepth / kDepthGroups;
  static constexpr int kRegisterPairs = 48 / (kWarpTiles * Products::kWords) < kPairs
                                            ? 48 / (kWarpTiles * Products::kWords)
                                            : kPairs;
  static constexpr int kSharedPairs = kPairs - kRegisterPairs;
  // A warp's words in shared memory: [kSharedPairs][kWarpTiles][kWarp][kWords].
  static constexpr int kWarpWords = kSharedPairs * kWarpTiles * kWarp * Products::kWords;
};

// A block's tile of h, as it is sent and staged: kMmaRows rows of its
// kMmaStates states, row r's 16-byte chunk c at chunk c ^ 4 (r % 2), so that
// rows g and g + 1, which a quarter-warp's 16-byte A loads read together,
// fall on different banks.
constexpr int kMmaTileFloats = kMmaRows * kMmaStates;
constexpr uint32_t kMmaTileBytes = kMmaTileFloats * sizeof(float);
__device__ __forceinline__ int tile_offset(int row, int state) {
  return row * kMmaStates + ((state / 4) ^ ((row & 1) << 2)) * 4 + state % 4;
}

// The blocks of a cluster at S states.
__host__ __device__ constexpr int mma_blocks(int64_t S) { return int((S + kMmaStates - 1) / kMmaStates); }

// The dynamic shared memory of a block at S states: the shared part of W_h,
// two slots of every block's staged tile, two of its own tile to send, the
// partial tiles.
template <typename Products>
constexpr int64_t forward_mma_shared_bytes(int64_t S) {
  using Split = MmaWeightSplit<Products>;
  return int64_t(kMmaWarps) * Split::kWarpWords * 4 +
         (2 * int64_t(mma_blocks(S) + 1) * kMmaTileFloats + int64_t(Split::kDepthGroups) * kMmaRows * kMmaPartialStride) *
             int64_t(sizeof(float));
}

// The grid: (blocks a cluster, clusters); block `rank` owns states rank kMmaStates on, cluster y rows y kMmaRows on.
template <typename Products>
__global__ void __launch_bounds__(kMmaThreads, 1) forward_cluster_mma(SequenceForwardTensors<float> p) {
  // Clusters exist from sm_90 on; the plan never launches this on an older device, whose build of it is empty.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  using Split = MmaWeightSplit<Products>;
  using persistent::kMmaCols;
  constexpr int kWords = Products::kWords;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  __shared__ __align__(8) uint64_t arrived[2];
  const cg::cluster_group cluster = cg::this_cluster();
  const int blocks = int(cluster.num_blocks()), rank = int(cluster.block_rank());
  const int S = p.S, pairs = persistent::mma_pairs(S);
  const int s0 = rank * kMmaStates, b0 = int(blockIdx.y) * kMmaRows, rows = min(kMmaRows, p.B - b0);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int column_group = warp % Split::kColumnGroups, depth_group = warp / Split::kColumnGroups;
  uint32_t* shared_w = reinterpret_cast<uint32_t*>(shared_bytes) + warp * Split::kWarpWords;
  float* staged = reinterpret_cast<float*>(shared_bytes) + kMmaWarps * Split::kWarpWords;  // [2][blocks] tiles
  float* sent = staged + 2 * blocks * kMmaTileFloats;                                        // [2] tiles
  float* partial = sent + 2 * kMmaTileFloats;  // [kDepthGroups][kMmaRows][kMmaPartialStride]

  // Column n of the warp's tile n8 is gate column (column_group kWarpTiles + n) kMmaCols + lane / 4 of the
  // block: gate column / kMmaStates of state s0 + column % kMmaStates (zero past S); pair i is depth_group kPairs + i.
  auto load_b = [&](int i, int n, uint32_t(&words)[kWords]) {
    const int column = (column_group * Split::kWarpTiles + n) * kMmaCols + lane / 4;
    const int gate = column / kMmaStates, s = s0 + column % kMmaStates;
    Products::load_b([&](int k) { return k < S && s < S ? float(p.weights[gate * S + s][k]) : 0.0f; },
                     depth_group * Split::kPairs + i, lane, words);
  };
  auto shared_words = [&](int i, int n) {
    return shared_w + (((i - Split::kRegisterPairs) * Split::kWarpTiles + n) * kWarp + lane) * kWords;
  };
  uint32_t w[Split::kRegisterPairs][Split::kWarpTiles][kWords];
#pragma unroll
  for (int i = 0; i < Split::kRegisterPairs; ++i)
#pragma unroll
    for (int n = 0; n < Split::kWarpTiles; ++n) load_b(i, n, w[i][n]);
#pragma unroll
  for (int i = Split::kRegisterPairs; i < Split::kPairs; ++i)
#pragma unroll
    for (int n = 0; n < Split::kWarpTiles; ++n) {
      uint32_t words[kWords];
      load_b(i, n, words);
#pragma unroll
      for (int q = 0; q < kWords; ++q) shared_words(i, n)[q] = words[q];
    }
  // Slot 0 holds h0 of the cluster's rows. Whatever no cell writes stays
  // zero: the products' padding past S, and rows past B.
  for (int e = threadIdx.x; e < blocks * kMmaTileFloats; e += kMmaThreads) {
    const int q = e / kMmaTileFloats, b = e / kMmaStates % kMmaRows, k = q * kMmaStates + e % kMmaStates;
    staged[q * kMmaTileFloats + tile_offset(b, e % kMmaStates)] = b < rows && k < S ? float(p.h0[b0 + b][k]) : 0.0f;
  }
  for (int e = threadIdx.x; e < 2 * kMmaTileFloats; e += kMmaThreads) sent[e] = 0.0f;
  const uint32_t barriers = shared_address(arrived), bytes = uint32_t(blocks) * kMmaTileBytes;
  // Step t > 0 receives the h of step t - 1 in slot t % 2.
  if (threadIdx.x == 0) init_receipt_barriers(barriers, 1, p.steps - 1, bytes);
  // A thread's cell (row r, state j of the block): its bias, its input sums one step ahead (added only where the
  // gates need them, so that nothing waits for their loads before then), its cell.
  const int r = threadIdx.x / kMmaStates, j = threadIdx.x % kMmaStates;
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
    // The saved h plane's step 0 (or the inference buffer's free slot): h0.
    p.h_of(-1)[int64_t(cell_b) * S + cell_s] = p.h0[cell_b][cell_s];
  }
  // The zeros and h0 written here are in place before any bulk copy reads or overwrites them.
  fence_for_bulk_copies();
  // Every block of the cluster has started (its shared memory and barriers exist).
  cluster.sync();
  for (int t = 0; t < p.steps; ++t) {
    const int slot = t & 1;
    if (t > 0) receive(barriers, 1, t - 1, p.steps - 1, bytes);
    const float* h = staged + slot * blocks * kMmaTileFloats;
    auto h_row4 = [&](int row, int k) {
      return *reinterpret_cast<const float4*>(h + k / kMmaStates * kMmaTileFloats + tile_offset(row, k % kMmaStates));
    };
    float acc[Split::kWarpTiles][4] = {};
    auto multiply = [&](int i, auto&& b_words) {
      if (depth_group * Split::kPairs + i >= pairs) return;
      typename Products::A a;
      Products::load_a(h_row4, depth_group * Split::kPairs + i, lane, a);
#pragma unroll
      for (int n = 0; n < Split::kWarpTiles; ++n) Products::mma(acc[n], a, b_words(n));
    };
#pragma unroll
    for (int i = 0; i < Split::kRegisterPairs; ++i)
      multiply(i, [&](int n) -> const uint32_t(&)[kWords] { return w[i][n]; });
#pragma unroll
    for (int i = Split::kRegisterPairs; i < Split::kPairs; ++i) {
      uint32_t words[Split::kWarpTiles][kWords];
#pragma unroll
      for (int n = 0; n < Split::kWarpTiles; ++n)
#pragma unroll
        for (int q = 0; q < kWords; ++q) words[n][q] = shared_words(i, n)[q];
      multiply(i, [&](int n) -> const uint32_t(&)[kWords] { return words[n]; });
    }
    float* mine = partial + depth_group * kMmaRows * kMmaPartialStride + column_group * Split::kWarpTiles * kMmaCols;
#pragma unroll
    for (int n = 0; n < Split::kWarpTiles; ++n)
      persistent::store_tile(mine + n * kMmaCols, kMmaPartialStride, lane, acc[n]);
    __syncthreads();
    // The partial tiles are next written after the next step's h has
    // arrived from every block, this one included, whose tile goes out only
    // after the block barrier below, when every cell has read them.
    if (has_cell) {
      float g[3];
#pragma unroll
      for (int q = 0; q < 3; ++q) {
        g[q] = persistent::sum_partials<Split::kDepthGroups>(partial, r * kMmaPartialStride + q * kMmaStates + j,
                                                             kMmaRows * kMmaPartialStride) +
               (in[q] + bias[q]);
        if (p.reserve != nullptr) p.plane(kPlaneGate0 + q, t)[int64_t(cell_b) * S + cell_s] = g[q];
      }
      const CellUpdate<float> u = finish_cell(p, t, cell_b, cell_s, sigmoid(g[0]), sigmoid(g[1]), elu(g[2]), cell);
      cell = u.cell;
      if (t + 1 < p.steps) {
        sent[(slot ^ 1) * kMmaTileFloats + tile_offset(r, j)] = u.h;
        fence_for_bulk_copies();
        load_in(t + 1);
      }
    }
    // The tile goes to slot t + 1 of every block once all its cells are in. It
    // and the slot it fills are next written two steps on, after every block
    // has received this block's h of the step after, which they send only
    // once they have received this one.
    if (t + 1 < p.steps) {
      __syncthreads();
      if (int(threadIdx.x) < blocks) {
        const int q = int(threadIdx.x);
        const uint32_t offset = uint32_t(((slot ^ 1) * blocks + rank) * kMmaTileBytes);
        send_bulk(cluster_address(shared_address(staged) + offset, q),
                  shared_address(sent) + uint32_t((slot ^ 1) * kMmaTileBytes), kMmaTileBytes,
                  cluster_address(barriers + 8 * (slot ^ 1), q));
      }
    }
  }
#endif
}

}  // namespace lltm::cuda::cluster
