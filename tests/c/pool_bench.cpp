// The pool's costs, the constants of parts_for's cost model
// (csrc/cpu/thread_pool.cpp): the overhead of a two-part job whose helper is
// spinning (a call right after another), and the time from publishing a job
// to a sleeping helper starting its part (a call after a pause). Medians over
// many trials; run on an otherwise idle machine.
//
// usage: pool_bench [trials]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "cpu/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Probe {
  Clock::time_point published;
  std::atomic<int64_t> helper_start_ns{-1};
  std::thread::id caller;
};

void body(void* ctx, int, int) {
  auto* p = static_cast<Probe*>(ctx);
  if (std::this_thread::get_id() != p->caller)
    p->helper_start_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - p->published).count());
}

// The helper's part waits until the helper starts, so that the job's end marks its arrival.
void wait_body(void* ctx, int part, int) {
  auto* p = static_cast<Probe*>(ctx);
  body(ctx, part, 2);
  if (std::this_thread::get_id() == p->caller)
    while (p->helper_start_ns.load() < 0 && Clock::now() - p->published < std::chrono::milliseconds(50)) {}
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::atoi(argv[1]) : 2000;
  setenv("LLTM_NUM_THREADS", "2", 0);
  std::printf("pool_bench: %d threads, %d trials\n", lltm::cpu::thread_count(), trials);
  std::vector<double> overhead, hot, cold;
  for (int i = 0; i < trials + 100; ++i) {  // back to back: the helper spins
    Probe p;
    p.caller = std::this_thread::get_id();
    const auto t0 = p.published = Clock::now();
    lltm::cpu::run_parallel(2, body, &p);
    if (i >= 100) overhead.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    Probe q;
    q.caller = std::this_thread::get_id();
    q.published = Clock::now();
    lltm::cpu::run_parallel(2, wait_body, &q);
    if (i >= 100 && q.helper_start_ns.load() >= 0) hot.push_back(double(q.helper_start_ns.load()) / 1000.0);
  }
  for (int i = 0; i < trials / 10; ++i) {  // after a pause long enough for the helper to sleep
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    Probe p;
    p.caller = std::this_thread::get_id();
    p.published = Clock::now();
    lltm::cpu::run_parallel(2, wait_body, &p);
    if (p.helper_start_ns.load() >= 0) cold.push_back(double(p.helper_start_ns.load()) / 1000.0);
  }
  std::printf("two-part job of empty parts: median %.2f us per call\n", median(overhead));
  std::printf("helper spinning: median %.2f us from publishing to its part starting\n", median(hot));
  if (!cold.empty())
    std::printf("helper asleep: median %.2f us from publishing to its part starting (%zu of %d woke)\n", median(cold),
                cold.size(), trials / 10);
  return 0;
}
