// Processors without a kernel variant of their own: only the generic
// baseline (plain C++ and GCC vector extensions) runs on them.
#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__)
#include "cpu_features.h"

namespace lltm::cpu {

std::vector<const char*> missing_feature_names(Isa isa) {
  if (isa == Isa::avx512 || isa == Isa::avx2) return {"an x86-64 processor"};
  if (isa == Isa::neon) return {"an aarch64 processor"};
  return {};
}

bool has_bf16_dot_product() { return false; }

}  // namespace lltm::cpu
#endif
