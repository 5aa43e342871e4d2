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

// A tensor-core kernel of a pass and its plan: blocks is 0 where none fits.
template <typename Kernel>
struct MmaChoice {
  Kernel kernel;
  persistent::SplitPlan plan;
};

// The first of a pass's tensor-core kernels (by tiles of rows a block, one
// then two) whose grid the device holds at once.
template <typename Kernel, typename Products>
MmaChoice<Kernel> first_fitting(const Kernel (&kernels)[persistent::kMmaMaxTiles], int64_t S, int64_t B,
                                int64_t (*shared_bytes)(int)) {
  for (int tiles = 1; tiles <= persistent::kMmaMaxTiles; ++tiles) {
    const persistent::SplitPlan plan =
        persistent::tensor_core_plan(reinterpret_cast<const void*>(kernels[tiles - 1]), S, B,
                                     tiles * persistent::kMmaRows, shared_bytes(tiles), Products::kMaxState);
    if (plan.blocks > 0) return {kernels[tiles - 1], plan};
  }
  return {kernels[0], {0, 0, 0}};
}

using ForwardMma = void (*)(SequenceForwardTensors<float>, int);
using BackwardMma = void (*)(SequenceBackwardTensors<float>, float*, int);

template <typename Products>
MmaChoice<ForwardMma> forward_mma_choice(int64_t S, int64_t B) {
  static constexpr ForwardMma kernels[] = {persistent::forward_mma<float, Products, 1>,
                                           persistent::forward_mma<float, Products, 2>};
  return first_fitting<ForwardMma, Products>(kernels, S, B, persistent::forward_mma_shared_bytes);
}

template <typename Products>
MmaChoice<BackwardMma> backward_mma_choice(int64_t S, int64_t B) {
  static constexpr BackwardMma kernels[] = {persistent::backward_mma<float, Products, 1>,
                                            persistent::backward_mma<float, Products, 2>};
  return first_fitting<BackwardMma, Products>(kernels, S, B, persistent::backward_mma_shared_bytes);
}

}  // namespace

template <typename T>
bool persistent_fits(int64_t S, int64_t B, RecurrentProducts products) {
  if constexpr (std::is_same_v<T, float>) {
    const bool mma = persistent::with_products(products, [&](auto products) {
      using Products = decltype(products);
      return forward_mma_choice<Products>(S, B).plan.blocks > 0 && backward_mma_choice<Products>(S, B).plan.blocks > 0;
    });
    if (mma) return true;
  }
  return with_states(S, [&](auto states) {
    return forward_plan<T, states()>(S, B).rows > 0 && backward_plan<T, states()>(S, B).rows > 0;
  });
}

template <typename T>
void persistent_forward(const SequenceForwardTensors<T>& p, RecurrentProducts products, cudaStream_t stream) {
  if constexpr (std::is_same_v<T, float>) {
    const bool on_tensor_cores = persistent::with_products(products, [&](auto products) {
      const MmaChoice<ForwardMma> mma = forward_mma_choice<decltype(products)>(p.S, p.B);
      if (mma.plan.blocks == 0) return false;
      launch_cooperative("forward_mma", mma.kernel, dim3(unsigned(mma.plan.blocks)), dim3(persistent::kThreads),
                         mma.plan.shared, stream, p, mma.plan.state_groups);
      return true;
    });
    if (on_tensor_cores) return;
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
bool persistent_backward(SequenceBackwardTensors<T> p, RecurrentProducts products, cudaStream_t stream) {
  if constexpr (std::is_same_v<T, float>) {
    const bool on_tensor_cores = persistent::with_products(products, [&](auto products) {
      const MmaChoice<BackwardMma> mma = backward_mma_choice<decltype(products)>(p.S, p.B);
      if (mma.plan.blocks == 0) return false;
      const Scratch shares(size_t(persistent::backward_share_floats(mma.plan.state_groups, p.B, p.S)) *
                           sizeof(float));
      launch_cooperative("backward_mma", mma.kernel, dim3(unsigned(mma.plan.blocks)), dim3(persistent::kThreads),
                         mma.plan.shared, stream, p, shares.as<float>(), mma.plan.state_groups);
      return true;
    });
    if (on_tensor_cores) return p.dG_by_gate;
  }
  p.dG_by_gate = false;
  if constexpr (std::is_same_v<T, float>) {
    const persistent::SplitPlan split = persistent::split_plan(
        reinterpret_cast<const void*>(persistent::backward_split<T>), p.S, p.B, persistent::split_shared_bytes(p.S));
    if (split.blocks > 0) {
      launch_cooperative("backward_split", persistent::backward_split<T>, dim3(unsigned(split.blocks)),
                         dim3(persistent::kThreads), split.shared, stream, p, split.state_groups);
      return false;
    }
  }
  with_states(p.S, [&](auto states) {
    const Plan plan = backward_plan<T, states()>(p.S, p.B);
    launch_cooperative("backward_persistent", persistent::backward_persistent<T, states()>,
                       dim3(unsigned(persistent::blocks_for(p.S, states()))), dim3(persistent::kThreads),
                       plan.shared, stream, p, plan.rows);
  });
  return false;
}

template bool persistent_fits<float>(int64_t, int64_t, RecurrentProducts);
template bool persistent_fits<double>(int64_t, int64_t, RecurrentProducts);
template void persistent_forward<float>(const SequenceForwardTensors<float>&, RecurrentProducts, cudaStream_t);
template void persistent_forward<double>(const SequenceForwardTensors<double>&, RecurrentProducts, cudaStream_t);
template bool persistent_backward<float>(SequenceBackwardTensors<float>, RecurrentProducts, cudaStream_t);
template bool persistent_backward<double>(SequenceBackwardTensors<double>, RecurrentProducts, cudaStream_t);

}  // namespace lltm::cuda
