// The persistent recurrence's backward pass.
#pragma once

#include <cooperative_groups.h>

#include "sequence/cell.cuh"
#include "sequence/persistent/staging.cuh"
#include "sequence/persistent/work_split.cuh"

namespace lltm::cuda::persistent {

namespace cg = cooperative_groups;

template <typename T, int kStates>
__global__ void __launch_bounds__(kThreads, 1) backward_persistent(SequenceBackwardTensors<T> p, int rows) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* w = reinterpret_cast<T*>(shared_bytes);  // [3S][kStates]: w[n][j] = W_h[n][state j]
  const int S = p.S, G = 3 * S, s0 = blockIdx.x * kStates;
  for (int e = threadIdx.x; e < G * kStates; e += kThreads) {
    const int n = e / kStates, j = e % kStates;
    w[e] = p.weights[n][min(s0 + j, S - 1)];
  }
  __syncthreads();
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  T* staged = w + padded<T>(int64_t(G) * kStates);  // [rows][3S]: rows of dG_t
  // A thread's first element of phase A: its saved values are loaded one step ahead, during the barrier.
  const int b_first = threadIdx.x / kStates, s_first = s0 + threadIdx.x % kStates;
  const bool has_first = b_first < p.B && s_first < S;
  SavedCell<T> ahead = has_first ? load_saved(p, p.steps - 1, b_first, s_first) : SavedCell<T>{};
  cg::grid_group grid = cg::this_grid();
  for (int t = p.steps - 1; t >= 0; --t) {
    // The gate gradients of this block's states; dh and dc come from this
    // block's own work on step t + 1.
    for (int e = threadIdx.x; e < p.B * kStates; e += kThreads) {
      const int b = e / kStates, se = s0 + e % kStates;
      if (se < S) backward_cell(p, t, b, se, e == int(threadIdx.x) ? ahead : load_saved(p, t, b, se));
    }
    // Every block's gate gradients of step t are in memory before any block reads them.
    auto token = grid.barrier_arrive();
    if (t > 0 && has_first) ahead = load_saved(p, t - 1, b_first, s_first);
    grid.barrier_wait(std::move(token));
    // dh_{t-1}[b][s] = sum over n of dG_t[b][n] W_h[n][s], for this block's states.
    for (int b0 = 0; b0 < p.B; b0 += rows) {
      const int count = min(rows, p.B - b0);
      if (b0 > 0) __syncthreads();  // the last pass's readers are done with the staging rows
      stage(staged, p.dG + (int64_t(t) * p.B + b0) * G, int64_t(count) * G);
      stage_wait();
      __syncthreads();
      for_row_groups<kBackwardRowsPerWarp<T>>(count, warp, [&](auto group, int first) {
        constexpr int R = decltype(group)::value;
        const T* dg = staged + first * G;
        T acc[R][kStates] = {};
#pragma unroll 4
        for (int n = lane; n < G; n += kWarp) {
          T wn[kStates];
          load_row(w + n * kStates, wn);
#pragma unroll
          for (int row = 0; row < R; ++row) {
            const T g = dg[row * G + n];
#pragma unroll
            for (int q = 0; q < kStates; ++q) acc[row][q] += g * wn[q];
          }
        }
        // P rows' sums a butterfly exchange: sum m (row m / kStates, state m % kStates) in lanes m L...
        constexpr int P = rows_per_exchange(R, kStates), L = kWarp / (P * kStates);
        const int m = lane / L, j = m % kStates, s = s0 + j;
        const bool owner = lane % L == 0 && s < S;
#pragma unroll
        for (int row = 0; row < R; row += P) {
          T sums[P * kStates];
#pragma unroll
          for (int e = 0; e < P * kStates; ++e) sums[e] = acc[row + e / kStates][e % kStates];
          const T sum = butterfly_sum(sums, lane);
          const int b = b0 + first + row + m / kStates;
          if (owner) {
            if (t > 0)
              p.dh[int64_t(b) * S + s] = sum;
            else
              p.d_h0[b][s] = sum;
          }
        }
      });
    }
    // This block's dh is complete before its threads read it for step t - 1.
    __syncthreads();
  }
}

}  // namespace lltm::cuda::persistent
