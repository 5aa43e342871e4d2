// How many CPUs this process may actually use, and so how many threads the
// pool starts: std::thread::hardware_concurrency() counts the machine's cores
// and ignores both the affinity mask (taskset, cpusets) and a container's CPU
// quota, which is how a pool ends up with more threads than it gets CPUs.
#pragma once

#include <cstdint>

namespace lltm::cpu {

// Where a thread count came from (the values of lltm_cpu_threads' *source).
enum class ThreadSource : int32_t {
  environment = 1,  // LLTM_NUM_THREADS
  affinity = 2,     // the CPUs in sched_getaffinity's mask
  cgroup = 3,       // the cgroup's CPU quota (v2 cpu.max, v1 cfs_quota_us / cfs_period_us), rounded up
  hardware = 4,     // hardware_concurrency(), when neither of the above is known
};

struct ThreadCount {
  int threads;
  ThreadSource source;
};

// LLTM_NUM_THREADS when it is a positive integer, else available_cpus() and where that came from.
ThreadCount configured_thread_count();

// The smaller of the affinity mask's CPUs and the CPU quota (at least 1), as
// cpu_limits.h reads them on this platform; the processor count without either.
ThreadCount available_cpu_count();
inline int available_cpus() { return available_cpu_count().threads; }

}  // namespace lltm::cpu
