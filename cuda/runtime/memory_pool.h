// Device memory from a per-device cache of blocks in front of the
// stream-ordered pool; these throw lltm::Error.
#pragma once

#include <cstdint>

#include "memory_counters.h"

namespace lltm::cuda {

void* alloc(uint64_t bytes, int device);
void free(void* data, int device);
// The device's counters: allocated, peak and reserved bytes of the pool (lltm_memory_stat).
MemoryCounters& counters(int device);

}  // namespace lltm::cuda
