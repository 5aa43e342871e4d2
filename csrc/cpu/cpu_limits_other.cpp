// cpu_limits.h where the system has neither affinity masks nor CPU quotas
// that this library knows how to read: no limit, so cpu_count.cpp uses the
// processor count.
#if !defined(__linux__)
#include "cpu_limits.h"

namespace lltm::cpu {

int affinity_cpus() { return 0; }
int quota_cpus() { return 0; }

}  // namespace lltm::cpu
#endif
