// Device memory from a per-device cache of blocks in front of the
// stream-ordered pool; these throw lltm::Error.
#pragma once

#include <cstdint>

#include "memory_counters.h"

namespace lltm::cuda {

void* alloc(uint64_t bytes, int device);
// Returns a block to the cache; while side work is pending, once it is settled.
void free(void* data, int device);
// Returns a block to the cache now (side work settled, runtime/side_work.h).
void free_now(void* data, int device);
// The device's counters: allocated, peak and reserved bytes of the pool (lltm_memory_stat).
MemoryCounters& counters(int device);

// The blocks a captured graph reads and writes: every block handed out, and
// every block freed, while its capture ran. They stay at their addresses and
// go to no other work until the graph is destroyed.
struct GraphMemory;

// From now until end_capture_memory, the device's allocations and frees go
// through a new GraphMemory (a block freed during the capture is reused by
// the capture itself, as stream order allows).
void begin_capture_memory(int device);
GraphMemory* end_capture_memory(int device);

// Gives a graph's blocks back to the cache (those the caller still holds
// become ordinary blocks, cached when freed); the graph's work must be done.
void release_graph_memory(GraphMemory* memory, int device);

}  // namespace lltm::cuda
