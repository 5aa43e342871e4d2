// The cgroup quota reader on fake hierarchies (v2 cpu.max, v1 cfs quota and
// period, nested limits where the tightest wins, unlimited and missing files),
// and the affinity count against sched_getaffinity.
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "cpu/cpu_count.h"
#include "cpu/cpu_limits.h"

namespace {

int failures = 0;

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

void expect(int got, int want, const char* what) {
  if (got != want) {
    std::fprintf(stderr, "%s: expected %d, got %d\n", what, want, got);
    ++failures;
  }
}

}  // namespace

int main() {
  char tmpl[] = "/tmp/lltm_cgroup_XXXXXX";
  const std::string root = mkdtemp(tmpl);
  const std::string a = root + "/a", b = a + "/b";
  std::system(("mkdir -p " + b).c_str());
  using lltm::cpu::cgroup_quota_cpus;

  // v2: unlimited at the root, 1.5 CPUs in a, unlimited in b (a's limit applies), rounded up.
  write(root + "/cpu.max", "max 100000\n");
  write(a + "/cpu.max", "150000 100000\n");
  write(b + "/cpu.max", "max 100000\n");
  expect(cgroup_quota_cpus(root, b, true), 2, "v2 nested 1.5 CPUs");
  write(b + "/cpu.max", "400000 100000\n");
  expect(cgroup_quota_cpus(root, b, true), 2, "v2 tightest of 4 and 1.5");
  write(a + "/cpu.max", "max 100000\n");
  expect(cgroup_quota_cpus(root, b, true), 4, "v2 4 CPUs");
  write(b + "/cpu.max", "max 100000\n");
  expect(cgroup_quota_cpus(root, b, true), 0, "v2 unlimited");
  expect(cgroup_quota_cpus(root, root + "/missing", true), 0, "v2 missing files");

  // v1: quota -1 is unlimited; 300000 / 100000 is 3 CPUs; 50000 / 100000 rounds up to 1.
  write(root + "/cpu.cfs_quota_us", "-1\n");
  write(root + "/cpu.cfs_period_us", "100000\n");
  write(a + "/cpu.cfs_quota_us", "300000\n");
  write(a + "/cpu.cfs_period_us", "100000\n");
  expect(cgroup_quota_cpus(root, a, false), 3, "v1 3 CPUs");
  write(a + "/cpu.cfs_quota_us", "50000\n");
  expect(cgroup_quota_cpus(root, a, false), 1, "v1 half a CPU");
  write(a + "/cpu.cfs_quota_us", "-1\n");
  expect(cgroup_quota_cpus(root, a, false), 0, "v1 unlimited");
  std::system(("rm -rf " + root).c_str());

  // This process: never more than its affinity mask allows.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const auto n = lltm::cpu::available_cpu_count();
    if (n.threads < 1 || n.threads > CPU_COUNT(&set)) {
      std::fprintf(stderr, "available_cpu_count %d outside [1, %d]\n", n.threads, CPU_COUNT(&set));
      ++failures;
    }
  }
  std::printf("cpu_count_test: %d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
