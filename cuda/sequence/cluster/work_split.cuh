// How the cluster kernels split their work: threads into lane groups, each
// group's (batch row, state) tasks, and a launch's states per block and rows
// per cluster.
#pragma once

#include "math/cell_math.cuh"

namespace lltm::cuda::cluster {

// A block's threads work in groups of kGroup lanes, one (batch row, state)
// task at a time: the lanes split the dot product's k and add up with three
// shuffles, so that a step's chain of dependent work is a few vector loads
// and FMAs long instead of a whole row. A group holds at most kMaxTasks
// tasks, so that its cells, gradients, prefetched inputs and offsets stay in
// registers between steps (the plan gives each cluster few enough rows).
// 256 threads: at 512 a thread gets at most 128 registers, and the tasks'
// values then spill to local memory.
constexpr int kClusterThreads = 256;
constexpr int kGroup = 8;
constexpr int kGroups = kClusterThreads / kGroup;
constexpr int kGroupsPerWarp = kWarp / kGroup;
constexpr int kMaxTasks = 2;
// Blocks a cluster: 8 on every sm_90 part; 16 where the device allows
// non-portable sizes, for W_h slices that 8 blocks cannot hold. A lane
// sends to the blocks lane and lane + kGroup.
constexpr int kPortableCluster = 8;
constexpr int kLargestCluster = 16;
constexpr int kSendsPerLane = kLargestCluster / kGroup;

// How a launch splits the work: `states` states per block (the cluster's
// blocks take consecutive slices of S), `rows` batch rows per cluster
// (gridDim.y clusters), and the padded length of a staged row.
struct ClusterShape {
  int states, rows, width;
};

// A group's task i: row b of the cluster, state j of the block (clamped into
// range where the group has no task i: it still takes the warp's shuffles).
struct Task {
  int b, j;
  bool active;
};

__device__ __forceinline__ Task task_of(int i, int group, int tasks, int P, int s0, int S) {
  const int task = group + i * kGroups, clamped = min(task, tasks - 1);
  return {clamped / P, clamped % P, task < tasks && s0 + clamped % P < S};
}

// Whether any group of this warp has a task i (alike in the whole warp).
__device__ __forceinline__ bool warp_has_task(int i, int tasks) {
  return int(threadIdx.x) / kWarp * kGroupsPerWarp + i * kGroups < tasks;
}

}  // namespace lltm::cuda::cluster
