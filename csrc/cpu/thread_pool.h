// A fork-join pool for calls that last microseconds. A job is a number of
// parts fixed by the caller (so results never depend on scheduling); which
// thread runs which part is decided at run time: every thread, the caller
// included, claims parts from one atomic word until none are left, so a
// thread that is descheduled never holds up parts it has not started.
#pragma once

#include <cstdint>

namespace lltm::cpu {

// Number of threads parallel() may use: LLTM_NUM_THREADS, or the CPUs this
// process may run on (affinity mask and cgroup quota; see cpu_count.h).
int thread_count();

// Where thread_count() came from: "environment", "affinity", "cgroup" or "hardware" (cpu_count.h).
const char* thread_count_source();

// Runs body(ctx, part, parts) once for every part in [0, parts) (at most
// 4095), on the pool's threads and the caller's; returns when all parts have
// returned. Any thread may run any part, and one thread may run several, one
// after another: more parts than threads balance the load between threads
// that run at different speeds (preempted, or woken late). A nested or concurrent call (the pool
// is busy) runs its parts on its own thread, in order.
void run_parallel(int parts, void (*body)(void* ctx, int part, int parts), void* ctx);

template <typename F>
void parallel(int parts, F&& body) {
  auto trampoline = [](void* ctx, int part, int n) { (*static_cast<F*>(ctx))(part, n); };
  run_parallel(parts, trampoline, &body);
}

// How many parts a job of `work` multiply-adds is worth splitting into: the
// cost model in thread_pool.cpp (waking a thread against the work it takes
// over). Depends only on `work` and thread_count(), so a call's partition,
// and therefore its rounding, is the same every time. The next run_parallel
// on this thread also uses `work` to decide whether waking a sleeping thread
// pays, and, for a small job, whether to run its parts on the calling thread
// alone, where the recent pace of its calls says that is sooner
// (run_mode.h); both change who runs a part, never the parts.
int parts_for(double work);

// Like parts_for, but for work that divides into `pieces` small
// independent pieces: 1 when the work is not worth splitting, otherwise
// several pieces per thread (at most `pieces`), which the threads claim as
// they come free. Depends only on `work`, `pieces` and thread_count().
int pieces_for(double work, int64_t pieces);

// Tells the next run_parallel on this thread that `work` multiply-adds
// follow it back to back (a sequence's remaining steps), so that sleeping
// helpers are woken when that whole stretch pays for a wake-up although one
// step alone would not; a helper woken once stays spinning between steps.
// Call it after parts_for, which it overrides; the partition is unchanged.
void expect_work(double work);

// [begin, end) of part `part` when `total` items in multiples of `grain` are split `parts` ways.
inline void split_range(int64_t total, int64_t grain, int part, int parts, int64_t& begin, int64_t& end) {
  const int64_t blocks = (total + grain - 1) / grain;
  const int64_t b0 = blocks * part / parts, b1 = blocks * (part + 1) / parts;
  begin = b0 * grain < total ? b0 * grain : total;
  end = b1 * grain < total ? b1 * grain : total;
}

#ifdef LLTM_POOL_HOOKS
// Test builds only: called by a worker between seeing a job and claiming a
// part of it (the window in which a stale worker once ran a part twice), with
// the worker's index; a stress test sleeps there to widen the window.
void set_pool_window_hook(void (*hook)(int worker));
#endif

}  // namespace lltm::cpu
