// How the backend launches kernels: the sizes of its grid-stride kernels, in
// one place so that every file uses the same block size and the same caps,
// and the one launch helper (the launch, then a check that turns a bad
// configuration into an lltm::Error naming the kernel).
#pragma once

#include <cstdint>
#include <tuple>
#include <utility>

#include "runtime/cuda_check.h"
#include "runtime/device.h"

namespace lltm::cuda {

// Threads per block of the elementwise (grid-stride) kernels.
constexpr int kBlockThreads = 256;

// A grid-stride loop gains nothing from more blocks than the GPU keeps
// resident: 4096 blocks of 256 threads exceed the 270k resident threads of an
// H100 (132 SMs x 2048), so larger grids only add scheduling.
constexpr int64_t kMaxGridBlocks = 4096;

// The hardware's limit on gridDim.y (and z).
constexpr int64_t kMaxGridRows = 65535;

// Blocks of kBlockThreads for a grid-stride loop over n items (at least one).
inline unsigned grid_blocks(int64_t n) {
  const int64_t b = (n + kBlockThreads - 1) / kBlockThreads;
  return unsigned(b < 1 ? 1 : b < kMaxGridBlocks ? b : kMaxGridBlocks);
}

// A grid's y extent for `rows` rows walked with a stride of gridDim.y.
inline unsigned grid_rows(int64_t rows) { return unsigned(rows < 1 ? 1 : rows < kMaxGridRows ? rows : kMaxGridRows); }

template <typename... Params, typename... Args>
void launch(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
            cudaStream_t stream, Args&&... args) {
  kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Args>(args)...);
  check_launch(cudaGetLastError(), name);
}

// A launch whose blocks all run at once, so that they may wait for each
// other (cooperative_groups grid sync); the caller has checked that the grid
// fits on the device at the kernel's occupancy.
template <typename... Params, typename... Args>
void launch_cooperative(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                        cudaStream_t stream, Args&&... args) {
  std::tuple<Params...> values(std::forward<Args>(args)...);
  std::apply(
      [&](auto&... v) {
        void* pointers[] = {static_cast<void*>(&v)...};
        check_launch(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), grid, block, pointers,
                                                 shared_bytes, stream),
                     name);
      },
      values);
}

// A launch with one launch attribute.
template <typename... Params, typename... Args>
void launch_with(cudaLaunchAttribute attribute, const char* name, void (*kernel)(Params...), dim3 grid, dim3 block,
                 size_t shared_bytes, cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  check_launch(cudaLaunchKernelEx(&config, kernel, Params(std::forward<Args>(args))...), name);
}

// A launch in thread-block clusters of `cluster` blocks along x (gridDim.x a
// multiple of it), whose blocks may read and write each other's shared
// memory and wait at the cluster's hardware barrier; the caller has checked
// that a cluster fits on the device (cudaOccupancyMaxActiveClusters).
template <typename... Params, typename... Args>
void launch_cluster(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, unsigned cluster,
                    size_t shared_bytes, cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  launch_with(attribute, name, kernel, grid, block, shared_bytes, stream, std::forward<Args>(args)...);
}

// Whether the current device may start a kernel while the one before it on
// the stream finishes (programmatic dependent launch, sm_90 on).
inline bool programmatic_launches() {
  const DeviceFacts* facts = current_device_facts();
  return facts != nullptr && facts->major >= 9;
}

// A launch that may start while the kernel before it on the stream finishes,
// where the device allows (else a plain launch): its blocks may read what no
// earlier kernel is still writing, and must call wait_for_prior_grid() before
// reading anything the kernel before it writes, or writing anything. Its
// launch and such reads then overlap that kernel's last blocks.
template <typename... Params, typename... Args>
void launch_after(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                  cudaStream_t stream, Args&&... args) {
  if (!programmatic_launches()) return launch(name, kernel, grid, block, shared_bytes, stream, std::forward<Args>(args)...);
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  launch_with(attribute, name, kernel, grid, block, shared_bytes, stream, std::forward<Args>(args)...);
}

#ifdef __CUDACC__
// In a kernel launched by launch_after: until the kernel before it has finished and its writes are visible.
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
#endif

}  // namespace lltm::cuda
