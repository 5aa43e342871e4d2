#include "cpu_count.h"

#include <cstdlib>
#include <thread>

#include "cpu_limits.h"

namespace lltm::cpu {

ThreadCount available_cpu_count() {
  const int quota = quota_cpus();
  const int affinity = affinity_cpus();
  if (quota > 0 && (affinity == 0 || quota < affinity)) return {quota, ThreadSource::cgroup};
  if (affinity > 0) return {affinity, ThreadSource::affinity};
  const unsigned hw = std::thread::hardware_concurrency();
  return {hw == 0 ? 1 : static_cast<int>(hw), ThreadSource::hardware};
}

ThreadCount configured_thread_count() {
  if (const char* env = std::getenv("LLTM_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1 && n <= 4095) return {static_cast<int>(n), ThreadSource::environment};
  }
  return available_cpu_count();
}

}  // namespace lltm::cpu
