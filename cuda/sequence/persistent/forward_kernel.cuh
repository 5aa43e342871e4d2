// The persistent recurrence's forward pass.
#pragma once

#include <cooperative_groups.h>

#include "sequence/cell.cuh"
#include "sequence/persistent/staging.cuh"
#include "sequence/persistent/work_split.cuh"

namespace lltm::cuda::persistent {

namespace cg = cooperative_groups;

// The gate sums h_{t-1}[b] . W_h[q] of the block's rows q for R consecutive
// staged rows h (S apart), partial per lane. Each row's sums are added in
// the same order whatever R is.
template <int R, int kGateRows, int kForwardSums, typename T>
__device__ __forceinline__ void recurrent_sums(const T* w, const T* h, int S, int lane, T (&acc)[R][kForwardSums]) {
  constexpr int kUnroll = R == 1 ? 4 : 1;
#pragma unroll kUnroll
  for (int k = lane; k < S; k += kWarp) {
    T wk[kGateRows];
    load_row(w + k * kGateRows, wk);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const T v = h[r * S + k];
#pragma unroll
      for (int q = 0; q < kGateRows; ++q) acc[r][q] += v * wk[q];
    }
  }
}

// A lane's parts after the gate sums of P rows went through one butterfly
// exchange: the sum it holds (row `row` of the P, the block's gate row r;
// the sum's first lane owns it) and, in lanes below P kStates, the cell it
// updates (row cell_row, state s0 + j).
template <int kStates, int P>
struct ForwardLanes {
  static constexpr int kSums = pow2_at_least(3 * kStates);  // a row's sums, padded to a power of two
  static constexpr int kLanesPerSum = kWarp / (P * kSums);
  static_assert(P * kSums <= kWarp, "every sum ends in its own lanes");
  int row, r, gate, s, cell_row, j;
  bool owner, finisher;
  __device__ __forceinline__ ForwardLanes(int lane, int s0, int S) {
    const int m = lane / kLanesPerSum;
    row = m / kSums;
    r = m % kSums;
    gate = r / kStates;
    s = s0 + r % kStates;
    owner = lane % kLanesPerSum == 0 && r < 3 * kStates && s < S;
    cell_row = lane / kStates % P;
    j = lane % kStates;
    finisher = lane < P * kStates && s0 + j < S;
  }
  // The lane holding gate row q's activation for this lane's cell.
  __device__ __forceinline__ int source(int q) const { return kLanesPerSum * (cell_row * kSums + q); }
};

// The gates and cells of P consecutive staged rows from `first` (row b0 +
// first of the batch) once their sums, P rows of kSums, are in `sums`.
template <int kStates, int P, typename T>
__device__ __forceinline__ void finish_rows(const SequenceForwardTensors<T>& p, int t, int b0, int first,
                                            T (&sums)[P * ForwardLanes<kStates, P>::kSums], T bias,
                                            const T* staged_in, const T* staged_cell, int s0, int lane) {
  constexpr int kGateRows = 3 * kStates;
  const ForwardLanes<kStates, P> l(lane, s0, p.S);
  const int row = first + l.row;
  const T g = butterfly_sum(sums, lane) + (l.r < kGateRows ? staged_in[row * kGateRows + l.r] : T(0)) + bias;
  const T activated = l.gate < 2 ? sigmoid(g) : elu(g);
  if (l.owner && p.reserve != nullptr) p.plane(kPlaneGate0 + l.gate, t)[int64_t(b0 + row) * p.S + l.s] = g;
  const T i = __shfl_sync(0xffffffffu, activated, l.source(l.j));
  const T o = __shfl_sync(0xffffffffu, activated, l.source(kStates + l.j));
  const T z = __shfl_sync(0xffffffffu, activated, l.source(2 * kStates + l.j));
  const int cell_row = first + l.cell_row;
  if (l.finisher) finish_cell(p, t, b0 + cell_row, s0 + l.j, i, o, z, staged_cell[cell_row * kStates + l.j]);
}

// The gates and cells of R consecutive staged rows from `first`: their gate
// sums over the block's weights w, then P rows an exchange (bias: a lane's
// bias for an exchange of one row, packed_bias for one of kPack rows).
template <int R, int kStates, int kPack, typename T>
__device__ __forceinline__ void forward_rows(const SequenceForwardTensors<T>& p, int t, int b0, int first, const T* w,
                                             const T* staged_h, const T* staged_in, const T* staged_cell, int s0,
                                             int lane, T bias, T packed_bias) {
  constexpr int kForwardSums = ForwardLanes<kStates, 1>::kSums;
  constexpr int P = rows_per_exchange(R, kForwardSums);
  static_assert(P == 1 || P == kPack, "an exchange of several rows takes the packed bias");
  T acc[R][kForwardSums] = {};
  recurrent_sums<R, 3 * kStates>(w, staged_h + first * p.S, p.S, lane, acc);
#pragma unroll
  for (int row = 0; row < R; row += P) {
    T sums[P * kForwardSums];
#pragma unroll
    for (int e = 0; e < P * kForwardSums; ++e) sums[e] = acc[row + e / kForwardSums][e % kForwardSums];
    finish_rows<kStates, P>(p, t, b0, first + row, sums, P == 1 ? bias : packed_bias, staged_in, staged_cell, s0,
                            lane);
  }
}

// rows: the batch rows staged per pass (see plan()).
template <typename T, int kStates>
__global__ void __launch_bounds__(kThreads, 1) forward_persistent(SequenceForwardTensors<T> p, int rows) {
  constexpr int kGateRows = 3 * kStates;
  constexpr int kForwardSums = ForwardLanes<kStates, 1>::kSums;
  constexpr int kPack = rows_per_exchange(kForwardRowsPerWarp<T>, kForwardSums);
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* w = reinterpret_cast<T*>(shared_bytes);  // [S][kGateRows]: w[k][q] = W_h[gate q / kStates of state q % kStates][k]
  const int S = p.S, s0 = blockIdx.x * kStates;
  T* staged_h = w + padded<T>(int64_t(S) * kGateRows);  // [rows][S]: h_{t-1}
  T* staged_in = staged_h + int64_t(rows) * S;        // [rows][kGateRows]: x_t W_x^T of the block's gates
  T* staged_cell = staged_in + rows * kGateRows;      // [rows][kStates]: the block's cells before step t
  // States past S read row S-1 instead, and their results are not stored.
  for (int e = threadIdx.x; e < S * kGateRows; e += kThreads) {
    const int k = e / kGateRows, q = e % kGateRows;
    w[e] = p.weights[q / kStates * S + min(s0 + q % kStates, S - 1)][k];
  }
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  // The bias of the sum a lane owns after an exchange of one row's sums, and after one of kPack rows'.
  auto bias_of = [&](auto lanes) { return lanes.owner ? p.bias[lanes.gate * S + lanes.s] : T(0); };
  const T bias = bias_of(ForwardLanes<kStates, 1>(lane, s0, S));
  const T packed_bias = bias_of(ForwardLanes<kStates, kPack>(lane, s0, S));
  for (int e = threadIdx.x; e < p.B * kStates; e += kThreads)
    if (s0 + e % kStates < S) save_h0(p, e / kStates, s0 + e % kStates);
  // The block's own inputs of a pass (no other block writes them): its gates'
  // x_t W_x^T, and its cells, written by their finisher lanes and read back
  // here by other threads after a barrier.
  auto stage_own = [&](int t, int b0, int count) {
    for (int e = threadIdx.x; e < count * kGateRows; e += kThreads) {
      const int q = e % kGateRows;
      staged_in[e] = __ldg(p.gin + (int64_t(t) * p.B + b0 + e / kGateRows) * 3 * S + q / kStates * S +
                           min(s0 + q % kStates, S - 1));
    }
    for (int e = threadIdx.x; e < count * kStates; e += kThreads) {
      const int b = b0 + e / kStates, se = min(s0 + e % kStates, S - 1);
      staged_cell[e] = t == 0 ? p.c0[b][se] : __ldcg(p.cell + int64_t(b) * S + se);
    }
  };
  const int first = min(rows, p.B);
  stage_own(0, 0, first);
  cg::grid_group grid = cg::this_grid();
  for (int t = 0; t < p.steps; ++t) {
    for (int b0 = 0; b0 < p.B; b0 += rows) {
      const int count = min(rows, p.B - b0);
      // The first pass's own inputs were staged during the barrier before it.
      if (b0 > 0) {
        __syncthreads();  // the last pass's readers are done with the staged rows
        stage_own(t, b0, count);
      }
      if (t == 0)
        for (int e = threadIdx.x; e < count * S; e += kThreads) staged_h[e] = p.h0[b0 + e / S][e % S];
      else
        stage(staged_h, p.h_of(t - 1) + int64_t(b0) * S, int64_t(count) * S);
      stage_wait();
      __syncthreads();
      for_row_groups<kForwardRowsPerWarp<T>>(count, warp, [&](auto group, int first) {
        forward_rows<decltype(group)::value, kStates, kPack>(p, t, b0, first, w, staged_h, staged_in, staged_cell, s0,
                                                             lane, bias, packed_bias);
      });
    }
    // Step t's h is complete in memory before any block reads it. While the
    // other blocks finish theirs, this one stages its own inputs of step t + 1.
    if (t + 1 < p.steps) {
      auto token = grid.barrier_arrive();
      stage_own(t + 1, 0, first);
      grid.barrier_wait(std::move(token));
    }
  }
}

}  // namespace lltm::cuda::persistent
