// The cluster recurrence's forward pass.
#pragma once

#include <cooperative_groups.h>

#include "sequence/cell.cuh"
#include "sequence/cluster/lane_math.cuh"
#include "sequence/cluster/messaging.cuh"
#include "sequence/cluster/work_split.cuh"

namespace lltm::cuda::cluster {

namespace cg = cooperative_groups;

// Forward: block `rank` of a cluster computes the gates of its states for the
// cluster's rows, and sends each new h into slot (t + 1) % 2 of every
// block's staged h; step t waits for slot t % 2's barrier (from t = 1).
template <typename T>
__global__ void __launch_bounds__(kClusterThreads, 1) forward_cluster(SequenceForwardTensors<T> p, ClusterShape shape) {
  // Thread-block clusters and their shared memory exist from sm_90 on; the
  // plan (plan.cu) never launches this on an older device, whose build of it is empty.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  using Vec = typename Vector16<T>::type;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  __shared__ __align__(8) uint64_t arrived[2];
  const cg::cluster_group cluster = cg::this_cluster();
  const int blocks = int(cluster.num_blocks()), rank = int(cluster.block_rank());
  const int S = p.S, P = shape.states, R = shape.rows, width = shape.width;
  const int s0 = rank * P, b0 = int(blockIdx.y) * R, rows = min(R, p.B - b0);
  // [3P][width]: row gate * P + j is W_h's row of that gate of state s0 + j
  // (zero past S, and for states past S).
  T* w = reinterpret_cast<T*>(shared_bytes);
  T* staged = w + 3 * P * width;  // [2][R][width]: h_{t-1} of the cluster's rows in slot t % 2
  for (int e = threadIdx.x; e < 3 * P * width; e += kClusterThreads) {
    const int q = e / width, k = e % width, s = s0 + q % P;
    w[e] = k < S && s < S ? p.weights[q / P * S + s][k] : T(0);
  }
  for (int e = threadIdx.x; e < 2 * R * width; e += kClusterThreads) {
    const int slot = e / (R * width), b = e / width % R, k = e % width;
    staged[e] = slot == 0 && b < rows && k < S ? p.h0[b0 + b][k] : T(0);
  }
  const uint32_t barriers = shared_address(arrived), bytes = uint32_t(rows * S * int(sizeof(T)));
  // Step t > 0 receives the h of step t - 1 in slot t % 2.
  if (threadIdx.x == 0) init_receipt_barriers(barriers, 1, p.steps - 1, bytes);
  const int lane = threadIdx.x % kGroup, group = threadIdx.x / kGroup;
  const int tasks = rows * P;
  const SendTargets to = send_targets(staged, barriers, lane, blocks);
  // Between the reserve's planes, and between steps in a plane and in the input sums.
  const int64_t plane = int64_t(p.steps) * p.B * S, plane_step = int64_t(p.B) * S, input_step = 3 * plane_step;
  Task task[kMaxTasks];
  T cell[kMaxTasks], bias[kMaxTasks][3], in[kMaxTasks][3];
  int length[kMaxTasks];  // the task's sample's steps
  // Each task's element of step t: its input sums (gate 0), output and saved values (plane 0), moved on each step.
  const T* input[kMaxTasks];
  T* output[kMaxTasks];
  T* saved[kMaxTasks];
#pragma unroll
  for (int i = 0; i < kMaxTasks; ++i) {
    task[i] = task_of(i, group, tasks, P, s0, S);
    const int b = b0 + task[i].b, s = min(s0 + task[i].j, S - 1);
    input[i] = p.gin + int64_t(b) * 3 * S + s;
    output[i] = p.outputs.data + b * p.outputs.strides[1] + s * p.outputs.strides[2];
    saved[i] = p.reserve != nullptr ? p.reserve + int64_t(b) * S + s : nullptr;
    cell[i] = p.c0[b][s];
    length[i] = task[i].active ? p.lengths.of(b, p.steps) : p.steps;
#pragma unroll
    for (int g = 0; g < 3; ++g) bias[i][g] = p.bias[g * S + s];
    if (task[i].active && lane == 0) save_h0(p, b, s);
  }
  // The next step's x_t W_x^T of each task, loaded ahead.
  auto load_inputs = [&] {
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i)
      if (task[i].active)
#pragma unroll
        for (int g = 0; g < 3; ++g) in[i][g] = __ldg(input[i] + g * S);
  };
  load_inputs();
  // Every block of the cluster has started (its shared memory and barriers exist).
  cluster.sync();
  for (int t = 0; t < p.steps; ++t) {
    const int slot = t & 1;
    if (t > 0) receive(barriers, 1, t - 1, p.steps - 1, bytes);
    const T* h = staged + slot * R * width;
    const uint32_t next = uint32_t((slot ^ 1) * R * width * int(sizeof(T)));
    T gates[kMaxTasks][3];
    CellUpdate<T> update[kMaxTasks];
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      if (!warp_has_task(i, tasks)) break;
      const int j = task[i].j, b = task[i].b, s = s0 + j;
      const Vec* hv = reinterpret_cast<const Vec*>(h + b * width);
      const Vec* w0 = reinterpret_cast<const Vec*>(w + j * width);
      const Vec* w1 = reinterpret_cast<const Vec*>(w + (P + j) * width);
      const Vec* w2 = reinterpret_cast<const Vec*>(w + (2 * P + j) * width);
      T a0 = 0, a1 = 0, a2 = 0;
#pragma unroll 4
      for (int c = lane; c < width / kPerVector<T>; c += kGroup) {
        const Vec x = hv[c];
        dot_add(a0, x, w0[c]);
        dot_add(a1, x, w1[c]);
        dot_add(a2, x, w2[c]);
      }
      gates[i][0] = group_sum(a0) + in[i][0] + bias[i][0];
      gates[i][1] = group_sum(a1) + in[i][1] + bias[i][1];
      gates[i][2] = group_sum(a2) + in[i][2] + bias[i][2];
      // Every lane of the group computes the update alike, and each sends h to its share of the blocks;
      // past the sample's length the state is carried.
      update[i] = t < length[i] ? cell_update(sigmoid(gates[i][0]), sigmoid(gates[i][1]), elu(gates[i][2]), cell[i])
                                : CellUpdate<T>{cell[i], h[b * width + s]};
      cell[i] = update[i].cell;
      if (task[i].active && t + 1 < p.steps) {
        const uint32_t at = next + uint32_t((b * width + s) * int(sizeof(T)));
#pragma unroll
        for (int q = 0; q < kSendsPerLane; ++q)
          if (lane + q * kGroup < blocks) send(to.staged[q] + at, update[i].h, to.barrier[q] + 8 * (slot ^ 1));
      }
    }
    // The step's results go to global memory, and the next step's input sums
    // load, while the other blocks' h are on their way.
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      if (!task[i].active || lane != 0) continue;
      const int b = b0 + task[i].b, s = s0 + task[i].j;
      *output[i] = t < length[i] ? update[i].h : T(0);
      output[i] += p.outputs.strides[0];
      if (saved[i] != nullptr) {
        saved[i][kPlaneGate0 * plane] = gates[i][0];
        saved[i][kPlaneGate1 * plane] = gates[i][1];
        saved[i][kPlaneGate2 * plane] = gates[i][2];
        saved[i][kPlaneCell * plane] = update[i].cell;
        if (t + 1 < p.steps) saved[i][kPlaneH * plane + plane_step] = update[i].h;  // step t + 1's h_{t}
        saved[i] += plane_step;
      }
      if (t + 1 == p.steps) {
        p.last_h[b][s] = update[i].h;
        p.last_cell[b][s] = update[i].cell;
      }
    }
    if (t + 1 < p.steps) {
#pragma unroll
      for (int i = 0; i < kMaxTasks; ++i) input[i] += input_step;
      load_inputs();
    }
  }
#endif
}

}  // namespace lltm::cuda::cluster
