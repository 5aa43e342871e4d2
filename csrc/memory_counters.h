// The counters behind lltm_memory_stat, one set per device, shared by the
// CPU's allocator and the CUDA pool. Lock-free, so that allocations from
// several threads (Workers, the pool's threads) need no common lock.
#pragma once

#include <atomic>
#include <cstdint>

#include "lltm.h"

namespace lltm {

class MemoryCounters {
 public:
  // A block of `bytes` handed out; `reserved` says whether it was newly taken from the system or the device.
  void allocated(uint64_t bytes, bool reserved) {
    const uint64_t now = allocated_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    uint64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    if (reserved) reserved_.fetch_add(bytes, std::memory_order_relaxed);
  }
  // A block of `bytes` given back; `released` says whether it went back to the system or the device too.
  void freed(uint64_t bytes, bool released) {
    allocated_.fetch_sub(bytes, std::memory_order_relaxed);
    if (released) reserved_.fetch_sub(bytes, std::memory_order_relaxed);
  }
  // Cached blocks of `bytes` (already freed) returned to the device.
  void released(uint64_t bytes) { reserved_.fetch_sub(bytes, std::memory_order_relaxed); }
  void reset_peak() { peak_.store(allocated_.load(std::memory_order_relaxed), std::memory_order_relaxed); }
  // stat is an lltm_memory_stat_kind the caller has checked.
  uint64_t get(int32_t stat) const {
    switch (stat) {
      case LLTM_MEMORY_ALLOCATED: return allocated_.load(std::memory_order_relaxed);
      case LLTM_MEMORY_PEAK_ALLOCATED: return peak_.load(std::memory_order_relaxed);
      default: return reserved_.load(std::memory_order_relaxed);
    }
  }

 private:
  std::atomic<uint64_t> allocated_{0}, peak_{0}, reserved_{0};
};

}  // namespace lltm
