// A fork-join pool sized to the machine's cores. LLTM calls at small sizes
// last ~10 us, so dispatch must cost well under a microsecond: workers spin
// for a short while after each job before they sleep.
#pragma once

#include <cstdint>

namespace lltm::cpu {

// Number of threads parallel_for may use (LLTM_NUM_THREADS overrides the core count).
int thread_count();

// Runs body(t, parts) for t in [0, parts) across the pool's threads, parts <=
// thread_count(); the calling thread runs part 0. Runs inline when the pool
// is busy (a nested or concurrent call).
void run_parallel(int parts, void (*body)(void* ctx, int part, int parts), void* ctx);

template <typename F>
void parallel(int parts, F&& body) {
  auto trampoline = [](void* ctx, int part, int n) { (*static_cast<F*>(ctx))(part, n); };
  run_parallel(parts, trampoline, &body);
}

// How many parts a job of `work` multiply-adds is worth splitting into.
inline int parts_for(double work) {
  const int n = thread_count();
  const double per_part = 32768.0;  // below this, dispatch costs more than it saves
  const double wanted = work / per_part;
  return wanted < 2.0 ? 1 : (wanted < n ? static_cast<int>(wanted) : n);
}

// [begin, end) of part `part` when `total` items in multiples of `grain` are split `parts` ways.
inline void split_range(int64_t total, int64_t grain, int part, int parts, int64_t& begin, int64_t& end) {
  const int64_t blocks = (total + grain - 1) / grain;
  const int64_t b0 = blocks * part / parts, b1 = blocks * (part + 1) / parts;
  begin = b0 * grain < total ? b0 * grain : total;
  end = b1 * grain < total ? b1 * grain : total;
}

}  // namespace lltm::cpu
