// The persistent forward on the tensor cores (tensor_core.cuh), where float32
// products may round to TF32. A block owns kSplitStates states of
// kSplitRows rows, as forward_split, so each step's product is its 16 staged
// rows of h_{t-1} times the 3 kSplitStates gate rows of W_h: an m16 tile per
// 8 gate columns. Its warps split the depth S between them, each keeping its
// slice of W_h as B fragments in registers for the whole sequence (S up to
// kMmaMaxState), and add their partial tiles in warp order through shared
// memory, so the results do not vary between runs. A thread per cell then
// finishes the step, keeping its cell in a register.
#pragma once

#include <cooperative_groups.h>

#include <type_traits>

#include "sequence/cell.cuh"
#include "sequence/persistent/backward_split_kernel.cuh"
#include "sequence/persistent/staging.cuh"
#include "sequence/persistent/tensor_core.cuh"
#include "sequence/persistent/work_split.cuh"

namespace lltm::cuda::persistent {

// The most states whose W_h slices the tensor-core kernels keep in registers:
// kMmaForwardSteps (kMmaBackwardSteps) depth tiles a warp, two registers per
// tile and column tile, 48 registers a thread at the most.
constexpr int kMmaMaxState = 512;
constexpr int kMmaGateTiles = 3 * kSplitStates / kMmaCols;
constexpr int kMmaForwardSteps = kMmaMaxState / kMmaDepth / kWarps;
// A partial tile row's stride: even for the 8-byte stores, 4 banks past the 3 kSplitStates columns.
constexpr int kMmaForwardPartialStride = 3 * kSplitStates + 4;
static_assert(kSplitRows == kMmaRows, "a block's rows are one m16 tile");
static_assert(kSplitRows * kSplitStates <= kThreads, "a thread per cell of the block");

__host__ __device__ constexpr int64_t forward_mma_shared_bytes(int64_t S) {
  return (kSplitRows * mma_row_stride(S) + int64_t(kWarps) * kSplitRows * kMmaForwardPartialStride) *
         int64_t(sizeof(float));
}

// state_groups: the blocks along the states; the grid is state_groups times the groups of kSplitRows rows.
template <typename T>
__global__ void __launch_bounds__(kThreads, 1) forward_mma(SequenceForwardTensors<T> p, int state_groups) {
  static_assert(std::is_same_v<T, float>, "TF32 products take float32 operands");
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int S = p.S;
  const int s0 = int(blockIdx.x) % state_groups * kSplitStates, b0 = int(blockIdx.x) / state_groups * kSplitRows;
  const int rows = min(kSplitRows, p.B - b0);
  const int ld = int(mma_row_stride(S)), depth_tiles = int(mma_depth(S)) / kMmaDepth;
  float* staged_h = reinterpret_cast<float*>(shared_bytes);  // [kSplitRows][ld]: h_{t-1} of the block's rows
  float* partial = staged_h + kSplitRows * ld;               // [kWarps][kSplitRows][kMmaForwardPartialStride]
  // Rows past B and the depth past S are never staged: zeros add nothing.
  for (int e = threadIdx.x; e < kSplitRows * ld; e += kThreads) staged_h[e] = 0.0f;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  // Column n of the block's gate tiles is gate n / kSplitStates of state s0 + n % kSplitStates (past S: S - 1's,
  // not stored); depth tile warp + i kWarps of them is this warp's i-th.
  uint32_t w[kMmaForwardSteps][kMmaGateTiles][2];
#pragma unroll
  for (int i = 0; i < kMmaForwardSteps; ++i) {
#pragma unroll
    for (int n = 0; n < kMmaGateTiles; ++n) {
      const int column = n * kMmaCols + lane / 4, k = (warp + i * kWarps) * kMmaDepth + lane % 4;
      const auto& row = p.weights[column / kSplitStates * S + min(s0 + column % kSplitStates, S - 1)];
      w[i][n][0] = k < S ? to_tf32(row[k]) : 0u;
      w[i][n][1] = k + 4 < S ? to_tf32(row[k + 4]) : 0u;
    }
  }
  // A thread's cell (row r, state j of the block): its bias, its input sums one step ahead, its cell.
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
    save_h0(p, cell_b, cell_s);
  }
  __syncthreads();  // the zeros before the rows staged over them
  cg::grid_group grid = cg::this_grid();
  for (int t = 0; t < p.steps; ++t) {
    if (t == 0)
      for (int e = threadIdx.x; e < rows * S; e += kThreads) staged_h[e / S * ld + e % S] = p.h0[b0 + e / S][e % S];
    else
      stage_rows(staged_h, ld, p.h_of(t - 1) + int64_t(b0) * S, rows, S);
    stage_wait();
    __syncthreads();
    float acc[kMmaGateTiles][4] = {};
#pragma unroll
    for (int i = 0; i < kMmaForwardSteps; ++i) {
      const int tile = warp + i * kWarps;
      if (tile < depth_tiles) {
        const AFragment a = load_a(staged_h + tile * kMmaDepth, ld, lane);
#pragma unroll
        for (int n = 0; n < kMmaGateTiles; ++n) mma_tf32(acc[n], a, w[i][n][0], w[i][n][1]);
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
        const float* sums = partial + r * kMmaForwardPartialStride + q * kSplitStates + j;
        float sum = sums[0];
#pragma unroll
        for (int k = 1; k < kWarps; ++k) sum += sums[k * kSplitRows * kMmaForwardPartialStride];
        g[q] = sum + in[q] + bias[q];
        if (p.reserve != nullptr) p.plane(kPlaneGate0 + q, t)[int64_t(cell_b) * S + cell_s] = g[q];
      }
      cell = finish_cell(p, t, cell_b, cell_s, sigmoid(g[0]), sigmoid(g[1]), elu(g[2]), cell).cell;
    }
    // Step t's h is complete in memory before any block reads it; the next
    // input sums load while the other blocks finish. The staged rows and the
    // partial tiles are next written after this barrier, when every reader
    // of this step is done with them.
    if (t + 1 < p.steps) {
      auto token = grid.barrier_arrive();
      if (has_cell) load_in(t + 1);
      grid.barrier_wait(std::move(token));
    }
  }
#endif
}

}  // namespace lltm::cuda::persistent
