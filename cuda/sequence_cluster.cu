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
// tasks, so that its cells, gradients and prefetched inputs stay in
// registers between steps (the plan gives each cluster few enough rows).
// 256 threads: at 512 a thread gets at most 128 registers, and the tasks'
// values then spill to local memory.
constexpr int kClusterThreads = 256;
constexpr int kGroup = 8;
constexpr int kGroups = kClusterThreads / kGroup;
constexpr int kMaxTasks = 4;
// Blocks a cluster: 8 on every sm_90 part; 16 where the device allows
// non-portable sizes, for W_h slices that 8 blocks cannot hold.
constexpr int kPortableCluster = 8;
constexpr int kLargestCluster = 16;

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

// The lanes of this thread's group, for shuffles that only the group takes.
__device__ __forceinline__ unsigned group_mask() { return 0xffu << (threadIdx.x % kWarp / kGroup * kGroup); }

// The group's sum, in every lane of it (a + b and b + a round alike, so the lanes agree to the bit).
template <typename T>
__device__ __forceinline__ T group_sum(T v, unsigned mask) {
#pragma unroll
  for (int offset = kGroup / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(mask, v, offset);
  return v;
}

// How a launch splits the work: `states` states per block (the cluster's
// blocks take consecutive slices of S), `rows` batch rows per cluster
// (gridDim.y clusters), and the padded length of a staged row.
struct ClusterShape {
  int states, rows, width;
};

// Forward: block `rank` of a cluster computes the gates of its states for the
// cluster's rows, and writes each new h into slot (t + 1) % 2 of every
// block's staged h, which the cluster barrier then publishes.
template <typename T>
__global__ void __launch_bounds__(kClusterThreads, 1) forward_cluster(SequenceForwardTensors<T> p, ClusterShape shape) {
  using Vec = typename Vector16<T>::type;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
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
  const int lane = threadIdx.x % kGroup, group = threadIdx.x / kGroup;
  const unsigned mask = group_mask();
  const int tasks = rows * P;
  // Task i of this group: row b, state s = s0 + j, with task index b * P + j.
  T cell[kMaxTasks], bias[kMaxTasks][3], in[kMaxTasks][3], gates[kMaxTasks][3];
  CellUpdate<T> update[kMaxTasks];
  auto load_inputs = [&](int t) {
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      const int task = group + i * kGroups, s = min(s0 + task % P, S - 1);
      if (task < tasks)
#pragma unroll
        for (int g = 0; g < 3; ++g) in[i][g] = __ldg(p.gin + (int64_t(t) * p.B + b0 + task / P) * 3 * S + g * S + s);
    }
  };
#pragma unroll
  for (int i = 0; i < kMaxTasks; ++i) {
    const int task = group + i * kGroups, b = b0 + task / P, s = s0 + task % P;
    const bool mine = task < tasks && s < S;
    cell[i] = mine ? p.c0[b][s] : T(0);
#pragma unroll
    for (int g = 0; g < 3; ++g) bias[i][g] = mine ? p.bias[g * S + s] : T(0);
    if (mine && lane == 0) save_h0(p, b, s);
  }
  load_inputs(0);
  // Every block of the cluster has started (its shared memory exists) and staged h0.
  cluster.sync();
  for (int t = 0; t < p.steps; ++t) {
    const T* h = staged + (t & 1) * R * width;
    T* next = staged + ((t + 1) & 1) * R * width;
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      const int task = group + i * kGroups, j = task % P, b = task / P, s = s0 + j;
      if (task >= tasks || s >= S) continue;  // alike in the whole group
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
      gates[i][0] = group_sum(a0, mask) + in[i][0] + bias[i][0];
      gates[i][1] = group_sum(a1, mask) + in[i][1] + bias[i][1];
      gates[i][2] = group_sum(a2, mask) + in[i][2] + bias[i][2];
      // Every lane of the group computes the update alike, and each hands h on to its share of the blocks.
      update[i] = cell_update(sigmoid(gates[i][0]), sigmoid(gates[i][1]), elu(gates[i][2]), cell[i]);
      cell[i] = update[i].cell;
      if (t + 1 < p.steps)
        for (int r = lane; r < blocks; r += kGroup) cluster.map_shared_rank(next, r)[b * width + s] = update[i].h;
    }
    // Every block's h of step t is in every block's slot before any reads it.
    // The step's results go to global memory after the arrival, so that its
    // release waits for the shared-memory writes only; the next step's input
    // sums load meanwhile too.
    if (t + 1 < p.steps) cluster.barrier_arrive();
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      const int task = group + i * kGroups, b = b0 + task / P, s = s0 + task % P;
      if (task >= tasks || s >= S || lane != 0) continue;
      if (p.reserve != nullptr) {
        const int64_t e = int64_t(b) * S + s;
        p.plane(kPlaneGate0, t)[e] = gates[i][0];
        p.plane(kPlaneGate1, t)[e] = gates[i][1];
        p.plane(kPlaneGate2, t)[e] = gates[i][2];
      }
      store_cell(p, t, b, s, update[i]);
    }
    if (t + 1 < p.steps) {
      load_inputs(t + 1);
      cluster.barrier_wait();
    }
  }
}

// Backward: block `rank` computes the gate gradients of its states (from the
// dh and dc it computed itself a step later), writes them into slot t % 2 of
// every block's staged dG_t, and after the cluster barrier computes
// dh_{t-1} = dG_t W_h for its states from its W_h columns.
template <typename T>
__global__ void __launch_bounds__(kClusterThreads, 1)
    backward_cluster(SequenceBackwardTensors<T> p, ClusterShape shape) {
  using Vec = typename Vector16<T>::type;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const cg::cluster_group cluster = cg::this_cluster();
  const int blocks = int(cluster.num_blocks()), rank = int(cluster.block_rank());
  const int S = p.S, G = 3 * S, P = shape.states, R = shape.rows, width = shape.width;
  const int s0 = rank * P, b0 = int(blockIdx.y) * R, rows = min(R, p.B - b0);
  // [P][width]: row j is W_h's column of state s0 + j over all 3S gates (zero past them).
  T* w = reinterpret_cast<T*>(shared_bytes);
  T* staged = w + P * width;  // [2][R][width]: dG_t of the cluster's rows in slot t % 2
  for (int e = threadIdx.x; e < P * width; e += kClusterThreads) {
    const int j = e / width, n = e % width, s = s0 + j;
    w[e] = n < G && s < S ? p.weights[n][s] : T(0);
  }
  for (int e = threadIdx.x; e < 2 * R * width; e += kClusterThreads) staged[e] = T(0);
  const int lane = threadIdx.x % kGroup, group = threadIdx.x / kGroup;
  const unsigned mask = group_mask();
  const int tasks = rows * P;
  T dh[kMaxTasks], dc[kMaxTasks];
  SavedCell<T> saved[kMaxTasks];
  CellGradients<T> d[kMaxTasks];
  auto load_ahead = [&](int t) {
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      const int task = group + i * kGroups, s = s0 + task % P;
      if (task < tasks && s < S) saved[i] = load_saved(p, t, b0 + task / P, s);
    }
  };
#pragma unroll
  for (int i = 0; i < kMaxTasks; ++i) {
    const int task = group + i * kGroups, b = b0 + task / P, s = s0 + task % P;
    const bool mine = task < tasks && s < S;
    dh[i] = mine ? last_grad_h(p, b, s) : T(0);
    dc[i] = mine ? last_grad_cell(p, b, s) : T(0);
  }
  load_ahead(p.steps - 1);
  // Every block of the cluster has started and cleared its staging slots.
  cluster.sync();
  for (int t = p.steps - 1; t >= 0; --t) {
    T* slot = staged + (t & 1) * R * width;
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      const int task = group + i * kGroups, b = task / P, s = s0 + task % P;
      if (task >= tasks || s >= S) continue;
      d[i] = cell_gradients(saved[i], dh[i], dc[i]);
      dc[i] = d[i].d_cell;
      for (int r = lane; r < blocks; r += kGroup) {
        T* row = cluster.map_shared_rank(slot, r) + b * width;
        row[s] = d[i].d0;
        row[S + s] = d[i].d1;
        row[2 * S + s] = d[i].d2;
      }
    }
    // Every block's gate gradients of step t are in every block's slot before
    // any reads them. They go to global memory after the arrival, so that its
    // release waits for the shared-memory writes only; the saved values of
    // step t - 1 load meanwhile too.
    cluster.barrier_arrive();
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      const int task = group + i * kGroups, b = b0 + task / P, s = s0 + task % P;
      if (task >= tasks || s >= S || lane != 0) continue;
      T* dg = p.dG + (int64_t(t) * p.B + b) * G;
      dg[s] = d[i].d0;
      dg[S + s] = d[i].d1;
      dg[2 * S + s] = d[i].d2;
      if (t == 0) p.d_c0[b][s] = d[i].d_cell;
    }
    if (t > 0) load_ahead(t - 1);
    cluster.barrier_wait();
#pragma unroll
    for (int i = 0; i < kMaxTasks; ++i) {
      const int task = group + i * kGroups, j = task % P, b = task / P, s = s0 + j;
      if (task >= tasks || s >= S) continue;
      const Vec* gv = reinterpret_cast<const Vec*>(slot + b * width);
      const Vec* wv = reinterpret_cast<const Vec*>(w + j * width);
      // One chain per vector lane: 3S products are too long a chain for one accumulator.
      Vec a = {};
#pragma unroll 4
      for (int c = lane; c < width / kPerVector<T>; c += kGroup) fma_lanes(a, gv[c], wv[c]);
      const T sum = group_sum(lanes_sum(a), mask);
      if (t > 0)
        dh[i] = sum;
      else if (lane == 0)
        p.d_h0[b0 + b][s] = sum;
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
  ClusterPlan result{{0, 0, 0}, 0, 0, 0, false};
  for (int largest = kPortableCluster; l.clusters && largest <= kLargestCluster && result.blocks == 0; largest *= 2) {
    const int64_t states = (S + largest - 1) / largest, blocks = (S + states - 1) / states;
    const int64_t weights = weight_rows * states * width * int64_t(sizeof(T));
    const int64_t row = 2 * width * int64_t(sizeof(T));  // both slots
    const int64_t most_rows = std::min({B, int64_t(kGroups) * kMaxTasks / states,
                                        (int64_t(l.shared_per_block) - weights) / row});
    if (most_rows < 1) continue;
    const size_t most_shared = size_t(weights + most_rows * row);
    // The cap, not what this size takes: plans of other sizes launch the same kernel.
    LLTM_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(l.shared_per_block)));
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
