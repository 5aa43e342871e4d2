#include "cpu_features.h"

namespace lltm::cpu {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512: return "avx512";
    case Isa::avx2: return "avx2";
    case Isa::baseline: return "baseline";
    case Isa::neon: return "neon";
    case Isa::native: return "native";
  }
  return "unknown";
}

std::string missing_features(Isa isa) {
  std::string s;
  for (const char* n : missing_feature_names(isa)) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace lltm::cpu
