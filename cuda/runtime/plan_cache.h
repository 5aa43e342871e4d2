// The sequence engine's launch plans, each made once per device, kernel and
// size and kept for the process: making one queries the device and sets the
// kernel's attributes, which a call should not repeat.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "runtime/cuda_check.h"

namespace lltm::cuda {

// The plan of `kernel` for S states and B rows on the current device:
// make(device) the first time, the kept one after. Each instantiation (a
// plan type and the caller's `make`) keeps its own plans.
template <typename Plan, typename Make>
Plan cached_plan(const void* kernel, int64_t S, int64_t B, Make&& make) {
  int device = 0;
  LLTM_CUDA_CHECK(cudaGetDevice(&device));
  static std::mutex mutex;
  static std::map<std::tuple<int, const void*, int64_t, int64_t>, Plan> plans;
  const auto key = std::make_tuple(device, kernel, S, B);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto hit = plans.find(key); hit != plans.end()) return hit->second;
  const Plan made = make(device);
  plans.emplace(key, made);
  return made;
}

}  // namespace lltm::cuda
