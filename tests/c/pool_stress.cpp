// Stress test of the CPU thread pool under preemption: many more threads
// than cores, several callers at once, and a hook that sleeps inside the
// window between a worker seeing a job and claiming a part of it (where the
// old pool let a stale worker run a part twice). Checks that every part of
// every job runs exactly once and before its call returns; a watchdog turns
// a hang into a failure.
//
// usage: pool_stress [jobs per caller] [callers] [timeout seconds]
// Built with -DLLTM_POOL_HOOKS against csrc/cpu/thread_pool.cpp (see CMakeLists.txt).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "cpu/thread_pool.h"

namespace {

constexpr int kThreads = 16;
// Jobs of up to twice as many parts as threads: a thread runs several.
constexpr int kMaxParts = 2 * kThreads;

std::atomic<long> failures{0};

// One call's record; kept alive for the whole run, so that a part that ran
// after its call returned is seen (as a count) instead of writing to a dead frame.
struct Job {
  std::atomic<int> runs[kMaxParts]{};
  std::atomic<bool> returned{false};
  std::atomic<int> late{0};
};

void body(void* ctx, int part, int parts) {
  auto* job = static_cast<Job*>(ctx);
  if (part < 0 || part >= parts || parts > kMaxParts) {
    failures.fetch_add(1);
    return;
  }
  // A little work, so that parts overlap and preemption lands inside them.
  volatile double x = 0;
  for (int i = 0; i < 200 * (part + 1); ++i) x = x + i;
  if (job->returned.load()) job->late.fetch_add(1);
  job->runs[part].fetch_add(1);
}

// Sleeps now and then at the window, for a few microseconds up to a millisecond.
void window_hook(int worker) {
  thread_local std::minstd_rand rng(unsigned(worker) * 7919u + 1u);
  const unsigned r = rng() % 64;
  if (r < 4) std::this_thread::sleep_for(std::chrono::microseconds(r == 0 ? 1000 : 5 * r));
  else if (r < 12) std::this_thread::yield();
}

void caller(int id, int jobs, std::vector<Job>& records) {
  std::minstd_rand rng(unsigned(id) + 17u);
  for (int j = 0; j < jobs; ++j) {
    Job& job = records[size_t(j)];
    const int parts = 1 + int(rng() % kMaxParts);
    lltm::cpu::run_parallel(parts, body, &job);
    job.returned.store(true);
    for (int p = 0; p < kMaxParts; ++p) {
      const int want = p < parts ? 1 : 0;
      const int got = job.runs[p].load();
      if (got != want) {
        if (failures.fetch_add(1) < 10)
          std::fprintf(stderr, "caller %d job %d: part %d of %d ran %d times\n", id, j, p, parts, got);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int jobs = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int callers = argc > 2 ? std::atoi(argv[2]) : 3;
  const int timeout = argc > 3 ? std::atoi(argv[3]) : 120;
  setenv("LLTM_NUM_THREADS", "16", 1);
  lltm::cpu::set_pool_window_hook(window_hook);
  if (lltm::cpu::thread_count() != kThreads) {
    std::fprintf(stderr, "expected %d pool threads, got %d\n", kThreads, lltm::cpu::thread_count());
    return 1;
  }

  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
    while (!finished.load()) {
      if (std::chrono::steady_clock::now() > end) {
        std::fprintf(stderr, "pool_stress: no progress after %d s (a hang)\n", timeout);
        std::fflush(stderr);
        std::_Exit(2);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });

  std::vector<std::vector<Job>> records;
  for (int c = 0; c < callers; ++c) records.emplace_back(size_t(jobs));
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c) threads.emplace_back(caller, c, jobs, std::ref(records[size_t(c)]));
  for (auto& t : threads) t.join();
  // Parts that ran late show up only after every thread has settled.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  long late = 0;
  for (auto& r : records)
    for (auto& job : r) late += job.late.load();
  finished.store(true);
  watchdog.join();

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long bad = failures.load() + late;
  std::printf("pool_stress: %d callers x %d jobs on %d threads in %.2f s: %ld wrong part counts, %ld parts after return\n",
              callers, jobs, kThreads, seconds, failures.load(), late);
  return bad == 0 ? 0 : 1;
}
