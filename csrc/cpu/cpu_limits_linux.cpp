// cpu_limits.h on Linux: the affinity mask (sched_getaffinity) and the
// cgroup's CPU quota (v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us),
// found through /proc/self/mountinfo and /proc/self/cgroup.
#if defined(__linux__)
#include "cpu_limits.h"

#include <sched.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace lltm::cpu {

namespace {

bool read_words(const std::string& path, std::vector<std::string>& words) {
  std::ifstream in(path);
  if (!in) return false;
  words.clear();
  for (std::string w; in >> w;) words.push_back(w);
  return !words.empty();
}

// A cgroup's quota in CPUs (fractional), or 0 when unlimited or unreadable.
double quota_at(const std::string& dir, bool v2) {
  std::vector<std::string> w;
  double quota = 0, period = 0;
  if (v2) {
    if (!read_words(dir + "/cpu.max", w) || w[0] == "max" || w.size() < 2) return 0;
    quota = std::atof(w[0].c_str());
    period = std::atof(w[1].c_str());
  } else {
    if (!read_words(dir + "/cpu.cfs_quota_us", w)) return 0;
    quota = std::atof(w[0].c_str());
    if (!read_words(dir + "/cpu.cfs_period_us", w)) return 0;
    period = std::atof(w[0].c_str());
  }
  return quota > 0 && period > 0 ? quota / period : 0;
}

// This process's cgroup directory and its hierarchy's mount point, for the
// v2 hierarchy or v1's cpu controller, from /proc/self/mountinfo and
// /proc/self/cgroup. False when there is none.
bool find_cgroup(bool v2, std::string& mount_dir, std::string& cgroup_dir) {
  std::ifstream mounts("/proc/self/mountinfo");
  std::string mount_root;
  mount_dir.clear();
  for (std::string line; std::getline(mounts, line);) {
    // id parent major:minor root mount-point options ... - fstype source super-options
    std::istringstream fields(line);
    std::string id, parent, dev, root, point, tok;
    fields >> id >> parent >> dev >> root >> point;
    while (fields >> tok && tok != "-") {}
    std::string fstype, source, options;
    fields >> fstype >> source >> options;
    const bool match = v2 ? fstype == "cgroup2" : fstype == "cgroup" && ("," + options + ",").find(",cpu,") != std::string::npos;
    if (match) {
      mount_dir = point;
      mount_root = root;
      break;
    }
  }
  if (mount_dir.empty()) return false;
  std::ifstream groups("/proc/self/cgroup");
  for (std::string line; std::getline(groups, line);) {
    // hierarchy-id:controllers:path; v2's line is "0::path"
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const bool match = v2 ? line.compare(0, a, "0") == 0 && controllers.empty()
                          : ("," + controllers + ",").find(",cpu,") != std::string::npos;
    if (!match) continue;
    std::string path = line.substr(b + 1);
    // Inside a cgroup namespace the mount's root is this path's prefix.
    if (mount_root != "/" && path.compare(0, mount_root.size(), mount_root) == 0) path = path.substr(mount_root.size());
    cgroup_dir = mount_dir + (path == "/" ? "" : path);
    return true;
  }
  return false;
}

}  // namespace

int cgroup_quota_cpus(const std::string& mount_dir, const std::string& cgroup_dir, bool v2) {
  double tightest = 0;
  std::string dir = cgroup_dir;
  for (;;) {
    const double q = quota_at(dir, v2);
    if (q > 0 && (tightest == 0 || q < tightest)) tightest = q;
    if (dir.size() <= mount_dir.size()) break;
    const size_t slash = dir.rfind('/');
    if (slash == std::string::npos || slash < mount_dir.size()) break;
    dir = dir.substr(0, slash);
  }
  return tightest > 0 ? static_cast<int>(std::ceil(tightest - 1e-9)) : 0;
}

int affinity_cpus() {
  // Sized for machines beyond CPU_SETSIZE (1024) too.
  for (int n = 1024; n <= (1 << 20); n *= 4) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (set == nullptr) return 0;
    const size_t bytes = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(bytes, set);
    const int rc = sched_getaffinity(0, bytes, set);
    const int count = rc == 0 ? CPU_COUNT_S(bytes, set) : 0;
    CPU_FREE(set);
    if (rc == 0) return count;
    if (errno != EINVAL) return 0;
  }
  return 0;
}

int quota_cpus() {
  std::string mount_dir, cgroup_dir;
  if (find_cgroup(true, mount_dir, cgroup_dir)) {
    if (const int quota = cgroup_quota_cpus(mount_dir, cgroup_dir, true)) return quota;
  }
  if (find_cgroup(false, mount_dir, cgroup_dir)) return cgroup_quota_cpus(mount_dir, cgroup_dir, false);
  return 0;
}

}  // namespace lltm::cpu
#endif
