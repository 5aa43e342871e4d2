// The cluster recurrence's backward pass.
#pragma once

#include <cooperative_groups.h>

#include "sequence/cell.cuh"
#include "sequence/cluster/lane_math.cuh"
#include "sequence/cluster/messaging.cuh"
#include "sequence/cluster/work_split.cuh"

namespace lltm::cuda::cluster {

namespace cg = cooperative_groups;

// Backward: block `rank` computes the gate gradients of its states (from the
// dh and dc it computed itself a step later), sends them into slot t % 2 of
// every block's staged dG_t, and once its barrier for the slot has every
// block's, computes dh_{t-1} = dG_t W_h for its states from its W_h columns.
template <typename T>
__global__ void __launch_bounds__(kClusterThreads, 1)
    backward_cluster(SequenceBackwardTensors<T> p, ClusterShape shape) {
  // Thread-block clusters and their shared memory exist from sm_90 on; the
  // plan (plan.cu) never launches this on an older device, whose build of it is empty.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  using Vec = typename Vector16<T>::type;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  __shared__ __align__(8) uint64_t arrived[2];
  const cg::cluster_group cluster = cg::this_cluster();
  const int blocks = int(cluster.num_blocks()), rank = int(cluster.block_rank());
  const int S = p.S, G = 3 * S, P = shape.states, R = shape.rows, width = shape.width;
  const int s0 = rank * P, b0 = int(blockIdx.y) * R, rows = min(R, p.B - b0);
  // [P][width]: row j is W_h's column of state s0 + j over all 3S gates (zero past them).
  T* w = reinterpret_cast<T*>(shared_bytes);
  T* staged = w + P * width;  // [2][R][width]: dG_t of the cluster's rows in slot t % 2
  for (int e = threadIdx.x; e < P * width; e += kClusterThreads) {
    // Consecutive threads read consecutive states of a row of W_h.
    const int n = e / P, j = e % P, s = s0 + j;
    w[j * width + n] = n < G && s < S ? p.weights[n][s] : T(0);
  }
  for (int e = threadIdx.x; e < 2 * R * width; e += kClusterThreads) staged[e] = T(0);
  const uint32_t barriers = shared_address(arrived), bytes = uint32_t(rows * G * int(sizeof(T)));
  // Step t, the pass's receipt T - 1 - t, receives in slot t % 2.
  if (threadIdx.x == 0) init_receipt_barriers(barriers, (p.steps - 1) & 1, p.steps, bytes);
  const int lane = threadIdx.x % kGroup, group = threadIdx.x / kGroup;
  const int tasks = rows * P;
  const SendTargets to = send_targets(staged, barriers, lane, blocks);
  // Between the reserve's planes, and between steps in a plane and in dG.
  const int64_t plane = int64_t(p.steps) * p.B * S, plane_step = int64_t(p.B) * S, dg_step = 3 * plane_step;
  Task task[kMaxTasks];
  T dh[kMaxTasks], dc[kMaxTasks];
  int length[kMaxTasks];  // the task's sample's steps
  SavedCell<T> saved[kMaxTasks];
  // Each task's element of step t in the reserve (plane 0), grad_outputs and dG (gate 0), moved back each step.
  const T* reserve[kMaxTasks];
  const T* grad_output[kMaxTasks];
  T* grad_gates[kMaxTasks];
#pragma unroll
  for (int i = 0; i < kMaxTasks; ++i) {
    task[i] = task_of(i, group, tasks, P, s0, S);
    const int b = b0 + task[i].b, s = min(s0 + task[i].j, S - 1);
    const int64_t last = p.steps - 1;
    reserve[i] = p.reserve + last * plane_step + int64_t(b) * S + s;
    grad_output[i] = p.has_grad_outputs ? &p.grad_outputs[last][b][s] : nullptr;
    grad_gates[i] = p.dG + last * dg_step + int64_t(b) * G + s;
    dh[i] = T(0);  // grad_last_h joins at the sample's last step
    dc[i] = last_grad_cell(p, b, s);
    length[i] = task[i].active ? p.lengths.of(b, p.steps) : p.steps;
  }
  // The next step's saved values of each task (what the gate gradients read that no other work writes), loaded ahead.
  auto load_ahead = [&] {
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      if (!task[i].active) continue;
      const T* at = reserve[i];
      saved[i] = {__ldg(at + kPlaneGate0 * plane), __ldg(at + kPlaneGate1 * plane), __ldg(at + kPlaneGate2 * plane),
                  __ldg(at + kPlaneCell * plane), grad_output[i] != nullptr ? *grad_output[i] : T(0)};
    }
  };
  load_ahead();
  // Every block of the cluster has started (its shared memory and barriers exist).
  cluster.sync();
  for (int t = p.steps - 1; t >= 0; --t) {
    const int slot = t & 1;
    const uint32_t here = uint32_t(slot * R * width * int(sizeof(T)));
    CellGradients<T> d[kMaxTasks];
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      if (!task[i].active) continue;
      const T grad_last_h = t + 1 == length[i] ? last_grad_h(p, b0 + task[i].b, s0 + task[i].j) : T(0);
      d[i] = sample_gradients(saved[i], t, length[i], dh[i], dc[i], grad_last_h);
      dc[i] = d[i].d_cell;
      const int s = s0 + task[i].j;
      const uint32_t at = here + uint32_t((task[i].b * width + s) * int(sizeof(T)));
#pragma unroll
      for (int q = 0; q < kSendsPerLane; ++q) {
        if (lane + q * kGroup >= blocks) continue;
        const uint32_t barrier = to.barrier[q] + 8 * slot;
        send(to.staged[q] + at, d[i].d0, barrier);
        send(to.staged[q] + at + uint32_t(S * int(sizeof(T))), d[i].d1, barrier);
        send(to.staged[q] + at + uint32_t(2 * S * int(sizeof(T))), d[i].d2, barrier);
      }
    }
    // The gradients go to global memory, and the saved values of step t - 1
    // load, while the other blocks' gradients are on their way.
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      if (!task[i].active || lane != 0) continue;
      grad_gates[i][0] = d[i].d0;
      grad_gates[i][S] = d[i].d1;
      grad_gates[i][2 * S] = d[i].d2;
      if (t == 0) p.d_c0[b0 + task[i].b][s0 + task[i].j] = d[i].d_cell;
    }
    if (t > 0) {
#pragma unroll
      for (int i = 0; i < kMaxTasks; ++i) {
        reserve[i] -= plane_step;
        grad_gates[i] -= dg_step;
        if (grad_output[i] != nullptr) grad_output[i] -= p.grad_outputs.strides[0];
      }
      load_ahead();
    }
    receive(barriers, (p.steps - 1) & 1, p.steps - 1 - t, p.steps, bytes);
    const T* dg = staged + slot * R * width;
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      if (!warp_has_task(i, tasks)) break;
      const Vec* gv = reinterpret_cast<const Vec*>(dg + task[i].b * width);
      const Vec* wv = reinterpret_cast<const Vec*>(w + task[i].j * width);
      // One chain per vector lane: 3S products are too long a chain for one accumulator.
      Vec a = {};
#pragma unroll 4
      for (int c = lane; c < width / kPerVector<T>; c += kGroup) fma_lanes(a, gv[c], wv[c]);
      const T sum = group_sum(lanes_sum(a));
      if (!task[i].active) continue;
      if (t > 0)
        dh[i] = sum;
      else if (lane == 0)
        p.d_h0[b0 + task[i].b][s0 + task[i].j] = sum;
    }
  }
#endif
}

}  // namespace lltm::cuda::cluster
