// Device memory: pooled allocation, copies (device to device on one GPU or
// two, contiguous host memory to and from strided device memory), fill,
// byte transfers and synchronisation, all on the device's stream.
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "device.h"
#include "lltm_args.h"
#include "memory_cuda.h"
#include "strided.h"

namespace lltm::cuda {

namespace {

// Blocks freed by the caller are kept per device and size and handed out
// again without a driver call: the pool of cudaMallocAsync costs about a
// microsecond an allocation, which shows at small sizes. Reuse is safe
// because all of a device's work runs on its one stream, in order.
struct BlockCache {
  std::mutex mutex;
  std::unordered_map<void*, uint64_t> sizes;           // live and cached blocks
  std::unordered_map<uint64_t, std::vector<void*>> free;  // cached blocks by size
};

BlockCache& cache(int device) {
  static std::vector<std::unique_ptr<BlockCache>> caches = [] {
    std::vector<std::unique_ptr<BlockCache>> v(device_count());
    for (auto& c : v) c = std::make_unique<BlockCache>();
    return v;
  }();
  return *caches.at(device);
}

uint64_t bucket(uint64_t bytes) {
  const uint64_t step = bytes <= (uint64_t(1) << 20) ? 512 : (uint64_t(1) << 20);
  return (bytes + step - 1) / step * step;
}

// Returns every cached block to the stream-ordered pool (before retrying an allocation that failed).
void release_cached(BlockCache& c, cudaStream_t stream) {
  for (auto& [size, blocks] : c.free)
    for (void* p : blocks) {
      c.sizes.erase(p);
      cudaFreeAsync(p, stream);
    }
  c.free.clear();
}

}  // namespace

void* alloc(uint64_t bytes, int device) {
  // Bucketing rounds up by at most 1 MiB, which cannot wrap below 2^63.
  check_bytes(bytes, "lltm_alloc");
  BlockCache& c = cache(device);
  const uint64_t size = bucket(bytes);
  // A cached block needs no CUDA call, so no current device either.
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto hit = c.free.find(size);
    if (hit != c.free.end() && !hit->second.empty()) {
      void* p = hit->second.back();
      hit->second.pop_back();
      return p;
    }
  }
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  std::lock_guard<std::mutex> lock(c.mutex);
  void* p = nullptr;
  cudaError_t e = cudaMallocAsync(&p, size, stream);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    release_cached(c, stream);
    LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));
    e = cudaMallocAsync(&p, size, stream);
  }
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    fail(LLTM_ERR_OUT_OF_MEMORY,
         "out of memory on cuda:" + std::to_string(device) + " allocating " + std::to_string(bytes) + " bytes");
  }
  check(e, "cudaMallocAsync");
  c.sizes.emplace(p, size);
  return p;
}

void free(void* data, int device) {
  BlockCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.sizes.find(data);
  if (it == c.sizes.end())
    fail(LLTM_ERR_INVALID_DEVICE, "the block was not allocated by lltm_alloc on cuda:" +
                                      std::to_string(device));
  c.free[it->second].push_back(data);
}

void copy(const lltm_tensor& dst, bool dst_on_device, int dst_device, const lltm_tensor& src, bool src_on_device,
          int src_device, int32_t dtype) {
  const size_t bytes = size_t(numel(dst) * element_size(dtype));
  if (dst_on_device && src_on_device && dst_device == src_device) {
    DeviceGuard guard(dst_device);
    strided_copy(dst, src, dtype, state(dst_device).stream);
    return;
  }
  if (dst_on_device && src_on_device) {
    // Across GPUs: gather on the source, move the bytes, scatter on the destination.
    cudaStream_t src_stream, dst_stream;
    {
      DeviceGuard guard(src_device);
      src_stream = state(src_device).stream;
    }
    DeviceGuard guard(dst_device);
    dst_stream = state(dst_device).stream;
    Scratch staged(bytes);
    {
      DeviceGuard on_src(src_device);
      Scratch gathered(bytes);
      strided_copy(contiguous_like(src, gathered.as<void>()), src, dtype, src_stream);
      LLTM_CUDA_CHECK(cudaStreamSynchronize(src_stream));
      LLTM_CUDA_CHECK(cudaStreamSynchronize(dst_stream));
      LLTM_CUDA_CHECK(cudaMemcpyPeer(staged.as<void>(), dst_device, gathered.as<void>(), src_device, bytes));
    }
    strided_copy(dst, contiguous_like(dst, staged.as<void>()), dtype, dst_stream);
    return;
  }
  // One side is contiguous host memory (liblltm stages strided host tensors).
  const int device = dst_on_device ? dst_device : src_device;
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  if (dst_on_device) {
    if (is_contiguous(dst)) {
      LLTM_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyHostToDevice, stream));
    } else {
      Scratch staged(bytes);
      LLTM_CUDA_CHECK(cudaMemcpyAsync(staged.as<void>(), src.data, bytes, cudaMemcpyHostToDevice, stream));
      strided_copy(dst, contiguous_like(dst, staged.as<void>()), dtype, stream);
    }
  } else if (is_contiguous(src)) {
    LLTM_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyDeviceToHost, stream));
  } else {
    Scratch staged(bytes);
    strided_copy(contiguous_like(src, staged.as<void>()), src, dtype, stream);
    LLTM_CUDA_CHECK(cudaMemcpyAsync(dst.data, staged.as<void>(), bytes, cudaMemcpyDeviceToHost, stream));
  }
  // The host side is the caller's pageable memory: finish before returning.
  LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void fill(const lltm_tensor& dst, double value, int32_t dtype, int device) {
  DeviceGuard guard(device);
  strided_fill(dst, value, dtype, state(device).stream);
}

void read(void* host_dst, const void* src, uint64_t bytes, int device) {
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  LLTM_CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream));
  LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void write(void* dst, const void* host_src, uint64_t bytes, int device) {
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  LLTM_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream));
  LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void synchronize(int device) {
  DeviceGuard guard(device);
  LLTM_CUDA_CHECK(cudaStreamSynchronize(state(device).stream));
}

}  // namespace lltm::cuda
