// A part that throws (a scratch buffer that cannot be allocated) on any of
// the pool's threads: the call must rethrow it on the caller's thread after
// every other part has run exactly once, and the pool must go on working.
// Before, a throw on a helper ended the process and one on the caller left
// helpers running parts of an unwound frame.
//
// usage: pool_throw_test [jobs]   (exit status 0 when every check passes)
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "cpu/thread_pool.h"

namespace {

constexpr int kParts = 16;

struct Job {
  std::atomic<int> runs[kParts]{};
  int throw_at[2];
};

void body(void* ctx, int part, int) {
  auto* job = static_cast<Job*>(ctx);
  volatile double x = 0;
  for (int i = 0; i < 500; ++i) x = x + i;
  job->runs[part].fetch_add(1);
  if (part == job->throw_at[0] || part == job->throw_at[1]) throw std::bad_alloc();
}

}  // namespace

int main(int argc, char** argv) {
  const int jobs = argc > 1 ? std::atoi(argv[1]) : 2000;
  setenv("LLTM_NUM_THREADS", "4", 1);
  long failures = 0, rethrown = 0;
  for (int j = 0; j < jobs; ++j) {
    Job job;
    job.throw_at[0] = j % kParts;
    job.throw_at[1] = j % 3 == 0 ? (j * 7 + 5) % kParts : -1;
    try {
      lltm::cpu::run_parallel(kParts, body, &job);
    } catch (const std::bad_alloc&) {
      ++rethrown;
    }
    for (int p = 0; p < kParts; ++p)
      if (job.runs[p].load() != 1) ++failures;
  }
  Job clean;
  clean.throw_at[0] = clean.throw_at[1] = -1;
  lltm::cpu::run_parallel(kParts, body, &clean);
  for (int p = 0; p < kParts; ++p)
    if (clean.runs[p].load() != 1) ++failures;
  std::printf("pool_throw_test: %d jobs on %d threads: %ld rethrown, %ld wrong part counts\n", jobs,
              lltm::cpu::thread_count(), rethrown, failures);
  return failures == 0 && rethrown == jobs ? 0 : 1;
}
