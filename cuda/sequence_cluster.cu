#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "launch.h"
#include "sequence_cluster.h"

namespace cg = cooperative_groups;

namespace lltm::cuda {

namespace {

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

// Staged rows are read 16 bytes at a time; their length is padded with zeros.
template <typename T>
struct Vector16;
template <>
struct Vector16<float> {
  using type = float4;
};
template <>
struct Vector16<double> {
  using type = double2;
};

template <typename T>
constexpr int kPerVector = int(16 / sizeof(T));

template <typename T>
constexpr int64_t padded_width(int64_t n) {
  return (n + kPerVector<T> - 1) / kPerVector<T> * kPerVector<T>;
}

__device__ __forceinline__ void dot_add(float& acc, float4 a, float4 b) {
  acc += a.x * b.x;
  acc += a.y * b.y;
  acc += a.z * b.z;
  acc += a.w * b.w;
}

__device__ __forceinline__ void dot_add(double& acc, double2 a, double2 b) {
  acc += a.x * b.x;
  acc += a.y * b.y;
}

__device__ __forceinline__ void fma_lanes(float4& acc, float4 a, float4 b) {
  acc.x += a.x * b.x;
  acc.y += a.y * b.y;
  acc.z += a.z * b.z;
  acc.w += a.w * b.w;
}

__device__ __forceinline__ void fma_lanes(double2& acc, double2 a, double2 b) {
  acc.x += a.x * b.x;
  acc.y += a.y * b.y;
}

__device__ __forceinline__ float lanes_sum(float4 a) { return (a.x + a.y) + (a.z + a.w); }
__device__ __forceinline__ double lanes_sum(double2 a) { return a.x + a.y; }

// The group's sum, in every lane of it (a + b and b + a round alike, so the
// lanes agree to the bit). The whole warp takes the shuffles (a partial
// mask costs a divergence check each time).
template <typename T>
__device__ __forceinline__ T group_sum(T v) {
#pragma unroll
  for (int offset = kGroup / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Each step's values reach the other blocks by st.async into their shared
// memory, each store counting its bytes on the receiver's mbarrier for that
// slot: a block waits for its own barrier only (the bytes of every block's
// values of the step), with neither a cluster-wide barrier nor the
// GPU-scope fence that a release of the cluster barrier costs.
//
// Two slots per block suffice without any other synchronisation: a block
// sends a step's values into a slot only after it has received every
// block's values of the step before (in the pass's order), and each block
// computed those after it had finished reading that slot two steps before;
// for the same reason no values of a slot's next phase reach a block before
// its current phase has completed (they may come before the block posts the
// next expectation: the transaction count then dips below zero, which the
// mbarrier allows, and the phase still needs that arrival to complete).
__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ uint32_t cluster_address(uint32_t local, int rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}

__device__ __forceinline__ void send(uint32_t to, float v, uint32_t barrier) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];" ::"r"(to), "f"(v),
               "r"(barrier)
               : "memory");
}

__device__ __forceinline__ void send(uint32_t to, double v, uint32_t barrier) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f64 [%0], %1, [%2];" ::"r"(to), "d"(v),
               "r"(barrier)
               : "memory");
}

// One arrival per phase (the expectation below) completes it, with the bytes.
__device__ __forceinline__ void init_barrier(uint32_t barrier) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barrier) : "memory");
}

__device__ __forceinline__ void publish_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// The barrier's next phase completes once `bytes` more have arrived.
__device__ __forceinline__ void expect_bytes(uint32_t barrier, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier), "r"(bytes) : "memory");
}

// Waits for the phase of this parity to complete: the st.async writes it
// counted are then visible to this thread.
__device__ __forceinline__ void wait_phase(uint32_t barrier, uint32_t parity) {
  uint32_t done = 0;
  while (!done)
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
}

// How a launch splits the work: `states` states per block (the cluster's
// blocks take consecutive slices of S), `rows` batch rows per cluster
// (gridDim.y clusters), and the padded length of a staged row.
struct ClusterShape {
  int states, rows, width;
};

// A group's task i: row b of the cluster, state j of the block (clamped into
// range where the group has no task i: it still takes the warp's shuffles).
// Where a lane's sends go: the staged rows and the mbarrier of blocks lane
// and lane + kGroup of the cluster (those that exist; the sends skip the rest).
struct SendTargets {
  uint32_t staged[kSendsPerLane], barrier[kSendsPerLane];
};

template <typename T>
__device__ __forceinline__ SendTargets send_targets(const T* staged, uint32_t barriers, int lane, int blocks) {
  SendTargets to;
#pragma unroll
  for (int q = 0; q < kSendsPerLane; ++q) {
    const int r = min(lane + q * kGroup, blocks - 1);
    to.staged[q] = cluster_address(shared_address(staged), r);
    to.barrier[q] = cluster_address(barriers, r);
  }
  return to;
}

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

// Forward: block `rank` of a cluster computes the gates of its states for the
// cluster's rows, and sends each new h into slot (t + 1) % 2 of every
// block's staged h; step t waits for slot t % 2's barrier (from t = 1).
template <typename T>
__global__ void __launch_bounds__(kClusterThreads, 1) forward_cluster(SequenceForwardTensors<T> p, ClusterShape shape) {
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
  if (threadIdx.x == 0) {
    init_barrier(barriers);
    init_barrier(barriers + 8);
    publish_barrier_init();
    if (p.steps > 1) expect_bytes(barriers + 8, bytes);
    if (p.steps > 2) expect_bytes(barriers, bytes);
  }
  const int lane = threadIdx.x % kGroup, group = threadIdx.x / kGroup;
  const int tasks = rows * P;
  const SendTargets to = send_targets(staged, barriers, lane, blocks);
  // Between the reserve's planes, and between steps in a plane and in the input sums.
  const int64_t plane = int64_t(p.steps) * p.B * S, plane_step = int64_t(p.B) * S, input_step = 3 * plane_step;
  Task task[kMaxTasks];
  T cell[kMaxTasks], bias[kMaxTasks][3], in[kMaxTasks][3];
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
    if (t > 0) {
      wait_phase(barriers + 8 * slot, ((t - 1) >> 1) & 1);
      if (threadIdx.x == 0 && t + 2 < p.steps) expect_bytes(barriers + 8 * slot, bytes);
    }
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
      // Every lane of the group computes the update alike, and each sends h to its share of the blocks.
      update[i] = cell_update(sigmoid(gates[i][0]), sigmoid(gates[i][1]), elu(gates[i][2]), cell[i]);
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
      *output[i] = update[i].h;
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
}

// Backward: block `rank` computes the gate gradients of its states (from the
// dh and dc it computed itself a step later), sends them into slot t % 2 of
// every block's staged dG_t, and once its barrier for the slot has every
// block's, computes dh_{t-1} = dG_t W_h for its states from its W_h columns.
template <typename T>
__global__ void __launch_bounds__(kClusterThreads, 1)
    backward_cluster(SequenceBackwardTensors<T> p, ClusterShape shape) {
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
  if (threadIdx.x == 0) {
    init_barrier(barriers);
    init_barrier(barriers + 8);
    publish_barrier_init();
    expect_bytes(barriers + 8 * ((p.steps - 1) & 1), bytes);
    if (p.steps > 1) expect_bytes(barriers + 8 * ((p.steps - 2) & 1), bytes);
  }
  const int lane = threadIdx.x % kGroup, group = threadIdx.x / kGroup;
  const int tasks = rows * P;
  const SendTargets to = send_targets(staged, barriers, lane, blocks);
  // Between the reserve's planes, and between steps in a plane and in dG.
  const int64_t plane = int64_t(p.steps) * p.B * S, plane_step = int64_t(p.B) * S, dg_step = 3 * plane_step;
  Task task[kMaxTasks];
  T dh[kMaxTasks], dc[kMaxTasks];
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
    dh[i] = last_grad_h(p, b, s);
    dc[i] = last_grad_cell(p, b, s);
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
      d[i] = cell_gradients(saved[i], dh[i], dc[i]);
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
    wait_phase(barriers + 8 * slot, ((p.steps - 1 - t) >> 1) & 1);
    if (threadIdx.x == 0 && t >= 2) expect_bytes(barriers + 8 * slot, bytes);
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
}

struct ClusterLimits {
  bool clusters;
  size_t shared_per_block;
};

const ClusterLimits& limits(int device) {
  static std::mutex mutex;
  static std::map<int, ClusterLimits> all;
  std::lock_guard<std::mutex> lock(mutex);
  auto hit = all.find(device);
  if (hit == all.end()) {
    int cluster_launch = 0, per_block = 0;
    LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device));
    LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    hit = all.emplace(device, ClusterLimits{cluster_launch != 0, size_t(per_block)}).first;
  }
  return hit->second;
}

// A launch's shape and size; blocks == 0 when the kernel cannot run the size.
struct ClusterPlan {
  ClusterShape shape;
  unsigned blocks, clusters;  // blocks per cluster, clusters (gridDim.y)
  size_t shared;
  bool one_wave;  // every cluster resident at once
};

// The smallest cluster whose blocks hold the weights (weight_rows rows of
// `width` per state) with at least one staged row pair beside them; then
// the rows per cluster: enough to give each lane group a task, more where
// fewer clusters than that fit on the device at once, never more than the
// groups' kMaxTasks or the shared memory allow. Plans are cached: a call's
// plan costs a lookup.
template <typename T>
ClusterPlan plan(const void* kernel, int64_t weight_rows, int64_t width, int64_t S, int64_t B) {
  int device = 0;
  LLTM_CUDA_CHECK(cudaGetDevice(&device));
  static std::mutex mutex;
  static std::map<std::tuple<int, const void*, int64_t, int64_t>, ClusterPlan> plans;
  const auto key = std::make_tuple(device, kernel, S, B);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto hit = plans.find(key); hit != plans.end()) return hit->second;
  const ClusterLimits& l = limits(device);
  // The dynamic shared memory a block may take beside the kernel's own (its barriers).
  cudaFuncAttributes attributes;
  LLTM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  const int64_t dynamic_cap = int64_t(l.shared_per_block) - int64_t(attributes.sharedSizeBytes);
  ClusterPlan result{{0, 0, 0}, 0, 0, 0, false};
  for (int largest = kPortableCluster; l.clusters && largest <= kLargestCluster && result.blocks == 0; largest *= 2) {
    const int64_t states = (S + largest - 1) / largest, blocks = (S + states - 1) / states;
    const int64_t weights = weight_rows * states * width * int64_t(sizeof(T));
    const int64_t row = 2 * width * int64_t(sizeof(T));  // both slots
    const int64_t most_rows = std::min({B, int64_t(kGroups) * kMaxTasks / states,
                                        (dynamic_cap - weights) / row});
    if (most_rows < 1) continue;
    const size_t most_shared = size_t(weights + most_rows * row);
    // The cap, not what this size takes: plans of other sizes launch the same kernel.
    LLTM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dynamic_cap)));
    if (blocks > kPortableCluster)
      LLTM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    // Clusters resident at once, at the most shared memory any rows take.
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(unsigned(blocks));
    config.blockDim = dim3(kClusterThreads);
    config.dynamicSmemBytes = most_shared;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = unsigned(blocks);
    attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
    int active = 0;
    if (cudaOccupancyMaxActiveClusters(&active, kernel, &config) != cudaSuccess) {
      cudaGetLastError();  // a cluster size this device refuses: try the next
      continue;
    }
    if (active < 1) continue;
    const int64_t rows = std::clamp(std::max((B + active - 1) / active, (int64_t(kGroups) + states - 1) / states),
                                    int64_t(1), most_rows);
    const int64_t clusters = (B + rows - 1) / rows;
    if (clusters > kMaxGridRows) continue;
    result = {{int(states), int(rows), int(width)},
              unsigned(blocks),
              unsigned(clusters),
              size_t(weights + rows * row),
              clusters <= active};
  }
  plans.emplace(key, result);
  return result;
}

template <typename T>
ClusterPlan forward_plan(int64_t S, int64_t B) {
  return plan<T>(reinterpret_cast<const void*>(forward_cluster<T>), 3, padded_width<T>(S), S, B);
}

template <typename T>
ClusterPlan backward_plan(int64_t S, int64_t B) {
  return plan<T>(reinterpret_cast<const void*>(backward_cluster<T>), 1, padded_width<T>(3 * S), S, B);
}

}  // namespace

template <typename T>
bool cluster_fits(int64_t S, int64_t B) {
  return forward_plan<T>(S, B).blocks > 0 && backward_plan<T>(S, B).blocks > 0;
}

template <typename T>
bool cluster_one_wave(int64_t S, int64_t B) {
  return cluster_fits<T>(S, B) && forward_plan<T>(S, B).one_wave && backward_plan<T>(S, B).one_wave;
}

template <typename T>
void cluster_forward(const SequenceForwardTensors<T>& p, cudaStream_t stream) {
  const ClusterPlan plan = forward_plan<T>(p.S, p.B);
  launch_cluster("forward_cluster", forward_cluster<T>, dim3(plan.blocks, plan.clusters), dim3(kClusterThreads),
                 plan.blocks, plan.shared, stream, p, plan.shape);
}

template <typename T>
void cluster_backward(const SequenceBackwardTensors<T>& p, cudaStream_t stream) {
  const ClusterPlan plan = backward_plan<T>(p.S, p.B);
  launch_cluster("backward_cluster", backward_cluster<T>, dim3(plan.blocks, plan.clusters), dim3(kClusterThreads),
                 plan.blocks, plan.shared, stream, p, plan.shape);
}

template bool cluster_fits<float>(int64_t, int64_t);
template bool cluster_fits<double>(int64_t, int64_t);
template bool cluster_one_wave<float>(int64_t, int64_t);
template bool cluster_one_wave<double>(int64_t, int64_t);
template void cluster_forward<float>(const SequenceForwardTensors<float>&, cudaStream_t);
template void cluster_forward<double>(const SequenceForwardTensors<double>&, cudaStream_t);
template void cluster_backward<float>(const SequenceBackwardTensors<float>&, cudaStream_t);
template void cluster_backward<double>(const SequenceBackwardTensors<double>&, cudaStream_t);

}  // namespace lltm::cuda
