// The persistent recurrence's entry points: the states per block for S, each
// pass's plan for a size, and its cooperative launch.
#include <type_traits>

#include "runtime/device.h"
#include "runtime/launch.h"
#include "sequence/persistent/backward_kernel.cuh"
#include "sequence/persistent/backward_mma_kernel.cuh"
#include "sequence/persistent/backward_split_kernel.cuh"
#include "sequence/persistent/forward_kernel.cuh"
#include "sequence/persistent/forward_mma_kernel.cuh"
#include "sequence/persistent/forward_split_kernel.cuh"
#include "sequence/persistent/persistent.h"
#include "sequence/persistent/plan.h"
#include "sequence/persistent/work_split.cuh"

namespace lltm::cuda {

namespace {

using persistent::Plan;

template <typename T, int kStates>
Plan forward_plan(int64_t S, int64_t B) {
  // A forward row stages h, the block's 3 kStates input sums and its kStates cells.
  return persistent::plan<T>(reinterpret_cast<const void*>(persistent::forward_persistent<T, kStates>), kStates, S,
                             B, S + 4 * kStates,
                             persistent::kGroupedRowsAtLeast<persistent::kForwardRowsPerWarp<T>>);
}

template <typename T, int kStates>
Plan backward_plan(int64_t S, int64_t B) {
  return persistent::plan<T>(reinterpret_cast<const void*>(persistent::backward_persistent<T, kStates>), kStates, S,
                             B, 3 * S, persistent::kGroupedRowsAtLeast<persistent::kBackwardRowsPerWarp<T>>);
}

// Calls body(std::integral_constant<int, kStates>) with the states per block that S takes.
template <typename Body>
auto with_states(int64_t S, Body&& body) {
  switch (persistent::states_for(S)) {
    case 1:
      return body(std::integral_constant<int, 1>{});
    case 2:
      return body(std::integral_constant<int, 2>{});
    default:
      return body(std::integral_constant<int, persistent::kMaxStates>{});
  }
}

}  // namespace

template <typename T>
bool persistent_fits(int64_t S, int64_t B) {
  return with_states(S, [&](auto states) {
    return forward_plan<T, states()>(S, B).rows > 0 && backward_plan<T, states()>(S, B).rows > 0;
  });
}

template <typename T>
void persistent_forward(const SequenceForwardTensors<T>& p, bool tf32, cudaStream_t stream) {
  if constexpr (std::is_same_v<T, float>) {
    if (tf32) {
      const persistent::SplitPlan mma = persistent::tensor_core_plan(
          reinterpret_cast<const void*>(persistent::forward_mma<T>), p.S, p.B, persistent::kForwardMmaSharedBytes);
      if (mma.blocks > 0)
        return launch_cooperative("forward_mma", persistent::forward_mma<T>, dim3(unsigned(mma.blocks)),
                                  dim3(persistent::kThreads), mma.shared, stream, p, mma.state_groups);
    }
    const persistent::SplitPlan split =
        persistent::split_plan(reinterpret_cast<const void*>(persistent::forward_split<T>), p.S, p.B,
                               persistent::forward_split_shared_bytes(p.S));
    if (split.blocks > 0)
      return launch_cooperative("forward_split", persistent::forward_split<T>, dim3(unsigned(split.blocks)),
                                dim3(persistent::kThreads), split.shared, stream, p, split.state_groups);
  }
  with_states(p.S, [&](auto states) {
    const Plan plan = forward_plan<T, states()>(p.S, p.B);
    launch_cooperative("forward_persistent", persistent::forward_persistent<T, states()>,
                       dim3(unsigned(persistent::blocks_for(p.S, states()))), dim3(persistent::kThreads),
                       plan.shared, stream, p, plan.rows);
  });
}

template <typename T>
void persistent_backward(const SequenceBackwardTensors<T>& p, bool tf32, cudaStream_t stream) {
  if constexpr (std::is_same_v<T, float>) {
    if (tf32) {
      const persistent::SplitPlan mma =
          persistent::tensor_core_plan(reinterpret_cast<const void*>(persistent::backward_mma<T>), p.S, p.B,
                                       persistent::kBackwardMmaSharedBytes);
      if (mma.blocks > 0) {
        const Scratch shares(size_t(persistent::backward_share_floats(mma.state_groups, p.B, p.S)) * sizeof(float));
        return launch_cooperative("backward_mma", persistent::backward_mma<T>, dim3(unsigned(mma.blocks)),
                                  dim3(persistent::kThreads), mma.shared, stream, p, shares.as<float>(),
                                  mma.state_groups);
      }
    }
    const persistent::SplitPlan split = persistent::split_plan(
        reinterpret_cast<const void*>(persistent::backward_split<T>), p.S, p.B, persistent::split_shared_bytes(p.S));
    if (split.blocks > 0)
      return launch_cooperative("backward_split", persistent::backward_split<T>, dim3(unsigned(split.blocks)),
                                dim3(persistent::kThreads), split.shared, stream, p, split.state_groups);
  }
  with_states(p.S, [&](auto states) {
    const Plan plan = backward_plan<T, states()>(p.S, p.B);
    launch_cooperative("backward_persistent", persistent::backward_persistent<T, states()>,
                       dim3(unsigned(persistent::blocks_for(p.S, states()))), dim3(persistent::kThreads),
                       plan.shared, stream, p, plan.rows);
  });
}

template bool persistent_fits<float>(int64_t, int64_t);
template bool persistent_fits<double>(int64_t, int64_t);
template void persistent_forward<float>(const SequenceForwardTensors<float>&, bool, cudaStream_t);
template void persistent_forward<double>(const SequenceForwardTensors<double>&, bool, cudaStream_t);
template void persistent_backward<float>(const SequenceBackwardTensors<float>&, bool, cudaStream_t);
template void persistent_backward<double>(const SequenceBackwardTensors<double>&, bool, cudaStream_t);

}  // namespace lltm::cuda
