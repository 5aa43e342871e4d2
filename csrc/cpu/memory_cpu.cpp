// Host memory: aligned allocation, with freed large blocks kept for reuse.
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <unistd.h>

#include "../lltm_args.h"
#include "../memory_counters.h"
#include "../status.h"
#include "lltm_cpu.h"

namespace lltm::cpu {

namespace {

constexpr uint64_t kHeader = 64;

// Blocks from kCacheMin bytes up, once freed, are kept by size for the next
// allocation of that size, up to kCacheMax bytes in all: malloc hands blocks
// that large to mmap and back to the system at free, so each training step
// (whose sequence reserves and outputs are megabytes) would otherwise fault
// its pages in again and unmap them. Smaller blocks stay in malloc's own bins.
constexpr uint64_t kCacheMin = uint64_t(64) << 10;
constexpr uint64_t kCacheMax = uint64_t(256) << 20;

struct BlockCache {
  std::mutex mutex;
  std::unordered_map<uint64_t, std::vector<void*>> free;  // block bases by rounded size
  uint64_t bytes = 0;
};

// Never destroyed: blocks may be freed by tensors finalized while the process exits.
BlockCache& cache() {
  static BlockCache* c = new BlockCache;
  return *c;
}

void* cached_block(uint64_t rounded) {
  if (rounded < kCacheMin) return nullptr;
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto hit = c.free.find(rounded);
  if (hit == c.free.end() || hit->second.empty()) return nullptr;
  void* base = hit->second.back();
  hit->second.pop_back();
  c.bytes -= rounded;
  return base;
}

// Returns every cached block to the system (before retrying an allocation that failed).
void release_cached() {
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& [size, blocks] : c.free)
    for (void* base : blocks) {
      std::free(base);
      counters().released(size);
    }
  c.free.clear();
  c.bytes = 0;
}

uint64_t physical_memory_bytes() {
  static const uint64_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : UINT64_MAX;
  }();
  return bytes;
}

}  // namespace

void* alloc(uint64_t bytes) {
  // Rounding up below cannot wrap: bytes is at most 2^63 (check_bytes).
  check_bytes(bytes, "lltm_alloc");
  // A machine that overcommits grants any size and kills the process when the
  // pages are touched (a copy of a 2^40-element expanded view), so what can
  // never fit is refused here.
  if (bytes > physical_memory_bytes())
    fail(LLTM_ERR_OUT_OF_MEMORY, "out of host memory allocating " + std::to_string(bytes) +
                                     " bytes: the machine has " + std::to_string(physical_memory_bytes()));
  // 64-byte alignment lets the kernels use aligned vector loads on whole rows.
  // The block's size sits in a header of that alignment's size before it, for free() to count.
  const uint64_t rounded = (bytes + 63) / 64 * 64;
  if (void* base = cached_block(rounded)) {
    counters().allocated(rounded, false);
    return static_cast<char*>(base) + kHeader;
  }
  const uint64_t total = rounded + kHeader;
  const auto allocate = [&] { return total > SIZE_MAX ? nullptr : std::aligned_alloc(64, size_t(total)); };
  void* base = allocate();
  if (base == nullptr) {
    release_cached();
    base = allocate();
  }
  if (base == nullptr) fail(LLTM_ERR_OUT_OF_MEMORY, "out of host memory allocating " + std::to_string(bytes) + " bytes");
  *static_cast<uint64_t*>(base) = rounded;
  counters().allocated(rounded, true);
  return static_cast<char*>(base) + kHeader;
}

void free(void* data) {
  if (data == nullptr) return;
  void* base = static_cast<char*>(data) - kHeader;
  const uint64_t rounded = *static_cast<uint64_t*>(base);
  if (rounded >= kCacheMin) {
    BlockCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.bytes + rounded <= kCacheMax) {
      c.free[rounded].push_back(base);
      c.bytes += rounded;
      counters().freed(rounded, false);
      return;
    }
  }
  counters().freed(rounded, true);
  std::free(base);
}

MemoryCounters& counters() {
  static MemoryCounters host;
  return host;
}

}  // namespace lltm::cpu
