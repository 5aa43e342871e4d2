// What the operating system limits this process to, for cpu_count.cpp's
// thread count. Each platform fills in these two functions (0 meaning "no
// such limit, or unknown"):
//
//   affinity_cpus()  the CPUs this thread may run on (and the threads it starts)
//   quota_cpus()     a CPU-time quota in whole CPUs, rounded up
//
// Linux reads sched_getaffinity and the cgroup's quota (cpu_limits_linux.cpp);
// elsewhere there is neither (cpu_limits_other.cpp), and cpu_count.cpp falls
// back to the processor count. A macOS port has no affinity masks nor quotas,
// so the fallback is its answer.
#pragma once

#include <string>

namespace lltm::cpu {

int affinity_cpus();
int quota_cpus();

#if defined(__linux__)
// The CPU quota of the cgroup at `cgroup_dir` and its ancestors up to
// `mount_dir` (the tightest one), in whole CPUs rounded up; 0 when unlimited
// or unreadable. v2 reads cpu.max, v1 cpu.cfs_quota_us and cpu.cfs_period_us.
// Exposed for tests, which point it at a fake hierarchy.
int cgroup_quota_cpus(const std::string& mount_dir, const std::string& cgroup_dir, bool v2);
#endif

}  // namespace lltm::cpu
