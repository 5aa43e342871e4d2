// Whether, and how, the persistent kernels run a size on the current device:
// the states per block, the rows staged per pass and the shared memory, from
// the device's limits and the kernel's occupancy.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lltm::cuda::persistent {

// The blocks of a grid of `states` states per block.
inline int64_t blocks_for(int64_t S, int states) { return (S + states - 1) / states; }

// The fewest states per block (1, 2 or 4) whose grid has at most one block per multiprocessor; 4 beyond.
int states_for(int64_t S);

// How a kernel runs S states and B rows: the rows staged per pass (0 when it cannot run) and its shared memory.
struct Plan {
  int rows;
  size_t shared;
};

// The most rows that fit beside the block's 3 states S weights when every
// block must be resident at once, each row taking row_elements, rounded down
// to a multiple of `group` rows (the rows worth grouping, see
// for_row_groups) where a pass holds some but not all of B and at least
// `group`; then a check of the occupancy the compiler's registers allow.
// Plans are cached: a call's plan costs a lookup.
template <typename T>
Plan plan(const void* kernel, int states, int64_t S, int64_t B, int64_t row_elements, int64_t group);

// A batch-split kernel's grid (forward_split_kernel.cuh,
// backward_split_kernel.cuh) of `shared` bytes a block: blocks is 0 where it
// does not run S states and B rows, or would not pay. It runs
// where its weights and rows fit a block, every block is resident at once,
// there are at least two groups of rows and the grid fills more than half of
// the multiprocessors (fewer blocks, each with four times the states of the
// unsplit kernel's, would leave the GPU idle).
struct SplitPlan {
  int state_groups, blocks;
  size_t shared;
};
SplitPlan split_plan(const void* kernel, int64_t S, int64_t B, int64_t shared);

// The tensor-core kernels' grid (forward_mma_kernel.cuh,
// backward_mma_kernel.cuh), split as above at `block_rows` rows a block:
// blocks is 0 where the device has no TF32 and bfloat16 tensor cores
// (before sm_80), S is past what their registers hold (max_state), or the
// grid is not resident at once. Their step's time hardly grows with the
// work of a block, so they run at any number of blocks that fits.
SplitPlan tensor_core_plan(const void* kernel, int64_t S, int64_t B, int64_t block_rows, int64_t shared,
                           int64_t max_state);

}  // namespace lltm::cuda::persistent
