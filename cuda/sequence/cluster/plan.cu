#include <algorithm>
#include <cstdint>

#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/plan_cache.h"
#include "sequence/cluster/plan.h"

namespace lltm::cuda::cluster {

namespace {

// Clusters of `blocks` blocks of `threads` threads at `shared` bytes each
// that the device holds at once, with the kernel's limits raised to their
// caps (not to what this size takes: plans of other sizes launch the same
// kernel); 0 where the device refuses the cluster size.
int active_clusters(const void* kernel, int64_t blocks, int64_t threads, size_t shared, int64_t dynamic_cap) {
  LLTM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dynamic_cap)));
  if (blocks > kPortableCluster)
    LLTM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(unsigned(blocks));
  config.blockDim = dim3(unsigned(threads));
  config.dynamicSmemBytes = shared;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = unsigned(blocks);
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  int active = 0;
  if (cudaOccupancyMaxActiveClusters(&active, kernel, &config) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return active;
}

// The dynamic shared memory a block of `kernel` may take beside the kernel's own (its barriers).
int64_t dynamic_cap(const void* kernel, const DeviceFacts& l) {
  cudaFuncAttributes attributes;
  LLTM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  return int64_t(l.shared_per_block) - int64_t(attributes.sharedSizeBytes);
}

}  // namespace

template <typename T>
ClusterPlan plan(const void* kernel, int64_t weight_rows, int64_t width, int64_t S, int64_t B) {
  return cached_plan<ClusterPlan>(kernel, S, B, [&](int device) {
    const DeviceFacts& l = device_facts(device);
    const int64_t cap = dynamic_cap(kernel, l);
    ClusterPlan result{{0, 0, 0}, 0, 0, 0, false, 0};
    for (int largest = kPortableCluster; l.cluster_launch && largest <= kLargestCluster && result.blocks == 0;
         largest *= 2) {
      const int64_t states = (S + largest - 1) / largest, blocks = (S + states - 1) / states;
      // st.async, which carries every value between the blocks, needs a cluster of two
      // blocks or more (compute-sanitizer refuses it in a cluster of one): S = 1 runs elsewhere.
      if (blocks < 2) break;
      const int64_t weights = weight_rows * states * width * int64_t(sizeof(T));
      const int64_t row = 2 * width * int64_t(sizeof(T));  // both slots
      const int64_t most_rows = std::min({B, int64_t(kGroups) * kMaxTasks / states,
                                          (cap - weights) / row});
      if (most_rows < 1) continue;
      const size_t most_shared = size_t(weights + most_rows * row);
      // Clusters resident at once, at the most shared memory any rows take.
      const int active = active_clusters(kernel, blocks, kClusterThreads, most_shared, cap);
      if (active < 1) continue;
      const int64_t rows = std::clamp(std::max((B + active - 1) / active, (int64_t(kGroups) + states - 1) / states),
                                      int64_t(1), most_rows);
      const int64_t clusters = (B + rows - 1) / rows;
      if (clusters > kMaxGridRows) continue;
      result = {{int(states), int(rows), int(width)},
                unsigned(blocks),
                unsigned(clusters),
                size_t(weights + rows * row),
                clusters <= active,
                unsigned(active)};
    }
    return result;
  });
}

MmaPlan mma_plan(const void* kernel, int64_t S, int64_t B, int64_t states, int64_t rows, int64_t threads,
                 int64_t shared, int64_t max_state) {
  return cached_plan<MmaPlan>(kernel, S, B, [&](int device) {
    const DeviceFacts& l = device_facts(device);
    const int64_t blocks = (S + states - 1) / states, clusters = (B + rows - 1) / rows;
    const int64_t cap = dynamic_cap(kernel, l);
    MmaPlan result{0, 0, 0, 0};
    if (!l.cluster_launch || S > max_state || blocks < 2 || blocks > kLargestCluster || shared > cap) return result;
    const int active = active_clusters(kernel, blocks, threads, size_t(shared), cap);
    if (clusters <= active) result = {unsigned(blocks), unsigned(clusters), size_t(shared), unsigned(active)};
    return result;
  });
}

template ClusterPlan plan<float>(const void*, int64_t, int64_t, int64_t, int64_t);
template ClusterPlan plan<double>(const void*, int64_t, int64_t, int64_t, int64_t);

}  // namespace lltm::cuda::cluster
