// Host memory: aligned allocation.
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "../lltm_args.h"
#include "../memory_counters.h"
#include "../status.h"
#include "lltm_cpu.h"

namespace lltm::cpu {

namespace {

constexpr uint64_t kHeader = 64;

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
  const uint64_t total = rounded + kHeader;
  void* base = total > SIZE_MAX ? nullptr : std::aligned_alloc(64, size_t(total));
  if (base == nullptr) fail(LLTM_ERR_OUT_OF_MEMORY, "out of host memory allocating " + std::to_string(bytes) + " bytes");
  *static_cast<uint64_t*>(base) = rounded;
  counters().allocated(rounded, true);
  return static_cast<char*>(base) + kHeader;
}

void free(void* data) {
  if (data == nullptr) return;
  void* base = static_cast<char*>(data) - kHeader;
  counters().freed(*static_cast<uint64_t*>(base), true);
  std::free(base);
}

MemoryCounters& counters() {
  static MemoryCounters host;
  return host;
}

}  // namespace lltm::cpu
