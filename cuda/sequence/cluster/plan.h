// Whether, and how, the cluster kernels run a size on the current device:
// the blocks per cluster, the rows per cluster and the shared memory, from
// the device's limits and the kernel's occupancy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sequence/cluster/work_split.cuh"

namespace lltm::cuda::cluster {

// A launch's shape and size; blocks == 0 when the kernel cannot run the size.
struct ClusterPlan {
  ClusterShape shape;
  unsigned blocks, clusters;  // blocks per cluster, clusters (gridDim.y)
  size_t shared;
  bool one_wave;      // every cluster resident at once
  unsigned resident;  // clusters of the launch's shape the device holds at once
};

// The smallest cluster whose blocks hold the weights (weight_rows rows of
// `width` per state) with at least one staged row pair beside them; then
// the rows per cluster: enough to give each lane group a task, more where
// fewer clusters than that fit on the device at once, never more than the
// groups' kMaxTasks or the shared memory allow. Plans are cached: a call's
// plan costs a lookup.
template <typename T>
ClusterPlan plan(const void* kernel, int64_t weight_rows, int64_t width, int64_t S, int64_t B);

// The tensor-core kernels' launch (forward_mma_kernel.cuh and
// backward_mma_kernel.cuh): `blocks` a cluster of `states` states each, a
// cluster per `rows` batch rows; blocks == 0 where it cannot run S (more
// than max_state, or fewer states than two blocks take: a copy between
// blocks needs a cluster of two), or where the device does not hold every
// cluster at once (a second wave would run every step again after the
// first: the grid-wide kernels are then faster). Cached per kernel and size.
struct MmaPlan {
  unsigned blocks, clusters;
  size_t shared;
  unsigned resident;  // clusters of the launch's shape the device holds at once
};
MmaPlan mma_plan(const void* kernel, int64_t S, int64_t B, int64_t states, int64_t rows, int64_t threads,
                 int64_t shared, int64_t max_state);

}  // namespace lltm::cuda::cluster
