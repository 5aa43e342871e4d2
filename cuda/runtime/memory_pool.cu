// Pooled device memory: blocks are allocated on the device's stream and,
// once freed, kept for reuse.
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lltm_args.h"
#include "runtime/device.h"
#include "runtime/lanes.h"
#include "runtime/memory_pool.h"
#include "runtime/side_work.h"

namespace lltm::cuda {

using SizedBlocks = std::unordered_map<uint64_t, std::vector<void*>>;

struct GraphMemory {
  std::unordered_set<void*> blocks;  // every block the graph may touch
  SizedBlocks free;                  // those of them no caller holds
};

namespace {

// Blocks freed by the caller are kept per device and size and handed out
// again without a driver call: each cudaMallocAsync is a call into the
// driver's pool, which shows in the cost of a small call. Reuse is safe
// because a device's work runs on its one stream, in order, except side work
// (runtime/side_work.h) and lanes (runtime/lanes.h), while which freed blocks wait.
struct BlockCache {
  std::mutex mutex;
  std::unordered_map<void*, uint64_t> sizes;     // live and cached blocks
  SizedBlocks free;                              // cached blocks by size
  GraphMemory* capturing = nullptr;              // the capture in progress
  std::unordered_map<void*, GraphMemory*> kept;  // blocks a graph keeps, by block
  std::unordered_set<void*> direct;              // blocks from cudaMalloc rather than the pool
  MemoryCounters counters;
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
      c.counters.released(size);
      if (c.direct.erase(p) != 0)
        cudaFree(p);
      else
        cudaFreeAsync(p, stream);
    }
  c.free.clear();
}

void keep(BlockCache& c, GraphMemory* m, void* p) {
  m->blocks.insert(p);
  c.kept.emplace(p, m);
}

// An allocation while capturing (c.mutex held): a block the capture freed,
// else a cached one, else a new one from the pool, made outside the capture
// (a stream-ordered allocation captured into the graph would be freed and
// made again by every replay, at an address the caller cannot keep).
void* capture_alloc(BlockCache& c, uint64_t size, int device) {
  GraphMemory* m = c.capturing;
  for (SizedBlocks* from : {&m->free, &c.free}) {
    auto hit = from->find(size);
    if (hit != from->end() && !hit->second.empty()) {
      void* p = hit->second.back();
      hit->second.pop_back();
      if (from == &c.free) keep(c, m, p);
      c.counters.allocated(size, false);
      return p;
    }
  }
  DeviceGuard guard(device);
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  check(cudaThreadExchangeStreamCaptureMode(&mode), "cudaThreadExchangeStreamCaptureMode");
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, size);
  cudaThreadExchangeStreamCaptureMode(&mode);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    fail(LLTM_ERR_OUT_OF_MEMORY, "out of memory on cuda:" + std::to_string(device) + " allocating " +
                                     std::to_string(size) + " bytes while capturing");
  }
  check(e, "cudaMalloc");
  c.sizes.emplace(p, size);
  c.direct.insert(p);
  keep(c, m, p);
  c.counters.allocated(size, true);
  return p;
}

// A block of `size` bytes (a bucket's) from the cache, or new.
void* alloc_block(BlockCache& c, uint64_t size, uint64_t bytes, int device) {
  // A cached block needs no CUDA call, so no current device either.
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.capturing != nullptr) return capture_alloc(c, size, device);
    auto hit = c.free.find(size);
    if (hit != c.free.end() && !hit->second.empty()) {
      void* p = hit->second.back();
      hit->second.pop_back();
      c.counters.allocated(size, false);
      return p;
    }
  }
  DeviceGuard guard(device);
  // Inside a side work region the block is ordered on the side stream, where it is used.
  cudaStream_t side = side_allocation_stream();
  cudaStream_t stream = side != nullptr ? side : state(device).stream;
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
  c.counters.allocated(size, true);
  return p;
}

}  // namespace

void* alloc(uint64_t bytes, int device) {
  // Bucketing rounds up by at most 1 MiB, which cannot wrap below 2^63.
  check_bytes(bytes, "lltm_alloc");
  const uint64_t size = bucket(bytes);
  void* p = alloc_block(cache(device), size, bytes, device);
  if (side_allocation_stream() != nullptr) note_side_block(p, size);
  return p;
}

void free(void* data, int device) {
  uint64_t size = 0;
  {
    BlockCache& c = cache(device);
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.sizes.find(data);
    if (it == c.sizes.end())
      fail(LLTM_ERR_INVALID_DEVICE, "the block was not allocated by lltm_alloc on cuda:" +
                                        std::to_string(device));
    size = it->second;
  }
  // Outside the cache's lock: side work's and the lanes' locks come first where both are held.
  if (park_free(device, data)) return;
  if (!defer_free(device, data, size)) free_now(data, device);
}

void free_now(void* data, int device) {
  BlockCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.sizes.find(data);
  c.counters.freed(it->second, false);
  // A block freed while capturing may have been used by the captured work: the graph keeps it.
  if (c.capturing != nullptr && c.kept.find(data) == c.kept.end()) keep(c, c.capturing, data);
  auto kept = c.kept.find(data);
  (kept != c.kept.end() ? kept->second->free : c.free)[it->second].push_back(data);
}

void begin_capture_memory(int device) {
  BlockCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mutex);
  c.capturing = new GraphMemory();
}

GraphMemory* end_capture_memory(int device) {
  BlockCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mutex);
  GraphMemory* m = c.capturing;
  c.capturing = nullptr;
  return m;
}

void release_graph_memory(GraphMemory* memory, int device) {
  if (memory == nullptr) return;
  BlockCache& c = cache(device);
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    for (void* p : memory->blocks) c.kept.erase(p);
    for (auto& [size, blocks] : memory->free)
      for (void* p : blocks) c.free[size].push_back(p);
  }
  delete memory;
}

MemoryCounters& counters(int device) { return cache(device).counters; }

}  // namespace lltm::cuda
