#include <algorithm>
#include <cstdint>

#include "runtime/device.h"
#include "runtime/plan_cache.h"
#include "sequence/persistent/backward_split_kernel.cuh"
#include "sequence/persistent/plan.h"
#include "sequence/persistent/staging.cuh"
#include "sequence/persistent/work_split.cuh"

namespace lltm::cuda::persistent {

namespace {

// The blocks of `kernel` a multiprocessor holds at once at `shared` bytes of
// dynamic shared memory each, once the kernel's limit is raised to its cap
// (not to what this size takes: plans of other sizes launch the same kernel,
// and a smaller limit set for a later size would make an earlier, cached
// plan's launch fail).
int resident_blocks(const void* kernel, const DeviceFacts& l, size_t shared) {
  cudaFuncAttributes attributes;
  LLTM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  LLTM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       int(l.shared_per_block - attributes.sharedSizeBytes)));
  int resident = 0;
  LLTM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kThreads, shared));
  return resident;
}

}  // namespace

int states_for(int64_t S) {
  int device = 0;
  LLTM_CUDA_CHECK(cudaGetDevice(&device));
  const int sms = device_facts(device).multiprocessors;
  for (int states = 1; states < kMaxStates; states *= 2)
    if (blocks_for(S, states) <= sms) return states;
  return kMaxStates;
}

template <typename T>
Plan plan(const void* kernel, int states, int64_t S, int64_t B, int64_t row_elements, int64_t group) {
  return cached_plan<Plan>(kernel, S, B, [&](int device) {
    const DeviceFacts& l = device_facts(device);
    const int64_t per_sm = (blocks_for(S, states) + l.multiprocessors - 1) / l.multiprocessors;
    const int64_t budget = std::min<int64_t>(int64_t(l.shared_per_block),
                                             int64_t(l.shared_per_multiprocessor) / per_sm -
                                                 int64_t(l.shared_reserved_per_block));
    const int64_t weights = padded<T>(3 * states * S) * int64_t(sizeof(T)), row = row_elements * int64_t(sizeof(T));
    Plan result{0, 0};
    if (l.cooperative_launch && budget >= weights + row) {
      const int64_t fit = (budget - weights) / row;
      const int64_t rows = fit >= B ? B : fit >= group ? fit / group * group : fit;
      const size_t shared = size_t(weights + rows * row);
      if (resident_blocks(kernel, l, shared) >= per_sm) result = {int(rows), shared};
    }
    return result;
  });
}

namespace {

// A batch-split grid of `shared` bytes a block for S states and B rows,
// kSplitStates states of `block_rows` rows a block, where `pays` (given the
// grid's blocks and groups of rows, and the device's limits) and every
// block is resident at once; cached per kernel and size.
template <typename Pays>
SplitPlan grid_plan(const void* kernel, int64_t S, int64_t B, int64_t block_rows, int64_t shared, Pays&& pays) {
  return cached_plan<SplitPlan>(kernel, S, B, [&](int device) {
    const DeviceFacts& l = device_facts(device);
    const int64_t state_groups = (S + kSplitStates - 1) / kSplitStates, row_groups = (B + block_rows - 1) / block_rows;
    const int64_t blocks = state_groups * row_groups;
    SplitPlan result{0, 0, 0};
    if (l.cooperative_launch && blocks <= l.multiprocessors && pays(blocks, row_groups, l) &&
        shared <= int64_t(l.shared_per_block) &&
        shared + int64_t(l.shared_reserved_per_block) <= int64_t(l.shared_per_multiprocessor)) {
      if (resident_blocks(kernel, l, size_t(shared)) >= 1) result = {int(state_groups), int(blocks), size_t(shared)};
    }
    return result;
  });
}

}  // namespace

SplitPlan split_plan(const void* kernel, int64_t S, int64_t B, int64_t shared) {
  return grid_plan(kernel, S, B, kSplitRows, shared, [](int64_t blocks, int64_t row_groups, const DeviceFacts& l) {
    return row_groups >= 2 && 2 * blocks > l.multiprocessors;
  });
}

SplitPlan tensor_core_plan(const void* kernel, int64_t S, int64_t B, int64_t block_rows, int64_t shared,
                           int64_t max_state) {
  return grid_plan(kernel, S, B, block_rows, shared, [&](int64_t, int64_t, const DeviceFacts& l) {
    return l.major >= 8 && S <= max_state;  // mma.sync in TF32 and bfloat16: sm_80 on
  });
}

template Plan plan<float>(const void*, int, int64_t, int64_t, int64_t, int64_t);
template Plan plan<double>(const void*, int, int64_t, int64_t, int64_t, int64_t);

}  // namespace lltm::cuda::persistent
