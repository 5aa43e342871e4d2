#include "runtime/pinned_pool.h"

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lltm_args.h"
#include "runtime/device.h"

namespace lltm::cuda {

namespace {

struct Block {
  uint64_t bytes;  // the size class: a power of two, at least a page
  bool live;
  std::vector<std::pair<int, cudaEvent_t>> uses;  // (device, event of its latest asynchronous copy there)
};

struct Pool {
  std::mutex mutex;
  std::map<uintptr_t, Block> blocks;                // every block, by address
  std::multimap<uint64_t, uintptr_t> free_blocks;   // the freed ones, by size class
  std::map<int, std::vector<cudaEvent_t>> events;   // finished events of each device, for reuse
};

// Never destroyed: blocks may still be in flight when the process exits.
Pool& pool() {
  static Pool* p = new Pool();
  return *p;
}

uint64_t size_class(uint64_t bytes) {
  uint64_t size = 4096;
  while (size < bytes) size <<= 1;
  return size;
}

// Whether every copy recorded on `b` has finished; their events then go back to the pool.
bool settled(Pool& p, Block& b) {
  for (auto& [device, event] : b.uses) {
    const cudaError_t done = cudaEventQuery(event);
    if (done == cudaErrorNotReady) return false;
    LLTM_CUDA_CHECK(done);
  }
  for (auto& [device, event] : b.uses) p.events[device].push_back(event);
  b.uses.clear();
  return true;
}

// The block that [data, data + bytes) lies within, if a live one does.
Block* find_live(Pool& p, const void* data, uint64_t bytes) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(data);
  auto it = p.blocks.upper_bound(address);
  if (it == p.blocks.begin()) return nullptr;
  --it;
  Block& b = it->second;
  if (!b.live || address - it->first > b.bytes || bytes > b.bytes - (address - it->first)) return nullptr;
  return &b;
}

}  // namespace

void* pinned_alloc(uint64_t bytes) {
  check_bytes(bytes, "lltm_alloc_pinned");
  const uint64_t size = size_class(bytes);
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  // Blocks of a size are freed in order and their copies run in stream order: when the
  // longest-freed one is still in use, so are the rest (a new block is made instead).
  if (auto it = p.free_blocks.find(size); it != p.free_blocks.end() && settled(p, p.blocks.at(it->second))) {
    p.blocks.at(it->second).live = true;
    void* data = reinterpret_cast<void*>(it->second);
    p.free_blocks.erase(it);
    return data;
  }
  void* data = nullptr;
  const cudaError_t made = cudaHostAlloc(&data, size, cudaHostAllocPortable);
  if (made == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    fail(LLTM_ERR_OUT_OF_MEMORY, "lltm_alloc_pinned: cannot page-lock " + std::to_string(size) + " bytes of host memory");
  }
  LLTM_CUDA_CHECK(made);
  p.blocks.emplace(reinterpret_cast<uintptr_t>(data), Block{size, true, {}});
  return data;
}

void pinned_free(void* data) {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  auto it = p.blocks.find(reinterpret_cast<uintptr_t>(data));
  if (it == p.blocks.end() || !it->second.live)
    fail(LLTM_ERR_INVALID_ARGUMENT, "lltm_free_pinned: the address is not a block lltm_alloc_pinned handed out");
  it->second.live = false;
  p.free_blocks.emplace(it->second.bytes, it->first);
}

bool is_pinned(const void* data, uint64_t bytes) {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return find_live(p, data, bytes) != nullptr;
}

void pinned_record_use(const void* data, cudaStream_t stream, int device) {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  Block* b = find_live(p, data, 1);
  if (b == nullptr) fail(LLTM_ERR_INTERNAL, "lltm_copy: a pinned block was freed while its copy was queued");
  // Each device queues its work on one stream, so the block's newest event there stands for every earlier one.
  for (auto& [on, event] : b->uses)
    if (on == device) {
      LLTM_CUDA_CHECK(cudaEventRecord(event, stream));
      return;
    }
  std::vector<cudaEvent_t>& spare = p.events[device];
  cudaEvent_t event;
  if (spare.empty()) {
    DeviceGuard guard(device);
    LLTM_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  } else {
    event = spare.back();
    spare.pop_back();
  }
  LLTM_CUDA_CHECK(cudaEventRecord(event, stream));
  b->uses.emplace_back(device, event);
}

}  // namespace lltm::cuda
