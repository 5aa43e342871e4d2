// How the persistent kernels split their work: states per block, threads
// per block, and the batch rows a warp takes at a time.
#pragma once

#include <type_traits>

#include "math/cell_math.cuh"

namespace lltm::cuda::persistent {

// A block owns kStates consecutive states (a template parameter: 1, 2 or 4,
// the fewest that spread S over at most one block per multiprocessor, so
// that small S uses more of the GPU): in the forward pass their 3 x kStates
// rows of W_h (i, o and z of each), in the backward pass the same states'
// kStates columns of W_h over all 3S gates; both are 3 kStates S weights.
// Its warps take the batch rows in turn, several at once where there are
// enough (see for_row_groups). Nothing a block writes in one step
// is read by another block in that step: the grid barrier between steps is
// the only one the kernels need.
constexpr int kMaxStates = 4;
constexpr int kThreads = 512;
constexpr int kWarps = kThreads / kWarp;

// A warp takes R batch rows at a time, so that each weight it reads from
// shared memory serves R rows: at one row a time the weights' shared memory
// reads, not the arithmetic, set the pace of a step. R is the most whose
// sums fit the registers of a thread at kThreads a block; a pass with too
// few rows to give half the warps R rows each goes one row at a time, as do
// the rows left after the groups.
template <typename T>
constexpr int kForwardRowsPerWarp = sizeof(T) == 4 ? 4 : 2;
template <typename T>
constexpr int kBackwardRowsPerWarp = 4;
// The rows of a pass worth grouping: groups for at least half the warps.
template <int kRows>
constexpr int kGroupedRowsAtLeast = kWarps / 2 * kRows;

// The rows whose sums one butterfly exchange adds up (see butterfly_sum):
// as many of a group's R rows as fill a warp's lanes with sums. The
// exchange adds each sum's lane partials in the same order whatever the
// count, so the results do not change with it; the work after it (the
// activations, the cell update) then runs once for all of them.
constexpr int rows_per_exchange(int R, int sums_per_row) {
  return R < kWarp / sums_per_row ? R : kWarp / sums_per_row;
}

// Calls rows<R>(first) for the R-row groups of a pass's `count` rows, R =
// kRows (where there are kGroupedRowsAtLeast rows) for as many whole groups
// as there are, then one row at a time for the rest; each warp takes its
// groups and then its single rows in turn.
template <int kRows, typename Rows>
__device__ __forceinline__ void for_row_groups(int count, int warp, Rows&& rows) {
  const int grouped = count >= kGroupedRowsAtLeast<kRows> ? count / kRows * kRows : 0;
  for (int b = warp * kRows; b < grouped; b += kWarps * kRows) rows(std::integral_constant<int, kRows>{}, b);
  for (int b = grouped + warp; b < count; b += kWarps) rows(std::integral_constant<int, 1>{}, b);
}

}  // namespace lltm::cuda::persistent
