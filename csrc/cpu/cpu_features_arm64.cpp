// aarch64 feature detection: Advanced SIMD (NEON) and floating point are
// part of the base architecture every aarch64 Linux and macOS runs on, but
// the kernel's hardware capabilities (getauxval(AT_HWCAP), as the Linux
// kernel documents for user space) are what it promises, so Linux asks them.
#if defined(__aarch64__)
#include "cpu_features.h"

#if defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace lltm::cpu {

namespace {

struct Features {
  bool fp = false, asimd = false;
};

Features detect() {
  Features f;
#if defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  f.fp = hwcap & HWCAP_FP;
  f.asimd = hwcap & HWCAP_ASIMD;
#else
  f.fp = f.asimd = true;
#endif
  return f;
}

}  // namespace

std::vector<const char*> missing_feature_names(Isa isa) {
  static const Features f = detect();
  std::vector<const char*> missing;
  // The list matches the compiler flags of the variant (cmake/cpu_isa.cmake):
  // the aarch64 base architecture, whose vector unit the kernels use.
  if (isa == Isa::neon) {
    if (!f.fp) missing.push_back("fp");
    if (!f.asimd) missing.push_back("asimd (neon)");
  }
  if (isa == Isa::avx512 || isa == Isa::avx2) missing.push_back("an x86-64 processor");
  return missing;
}

bool has_bf16_dot_product() { return false; }

}  // namespace lltm::cpu
#endif
