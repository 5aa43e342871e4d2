// x86 feature detection as OpenBLAS and ggml do it: cpuid says what the
// processor implements, and xgetbv says whether the operating system saves
// the wider registers on a context switch (without that, an AVX instruction
// faults even on a processor that has it).
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

#include <cstdint>

#include "cpu_features.h"

namespace lltm::cpu {

namespace {

struct Features {
  bool avx = false, avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool os_ymm = false;  // XCR0: SSE and AVX state
  bool os_zmm = false;  // XCR0: opmask, upper ZMM0-15 and ZMM16-31 state
  bool avx512bf16 = false;
};

uint64_t read_xcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t(edx) << 32) | eax;
}

Features detect() {
  Features f;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = c & bit_OSXSAVE;
  f.avx = c & bit_AVX;
  f.fma = c & bit_FMA;
  f.f16c = c & bit_F16C;
  if (osxsave) {
    const uint64_t xcr0 = read_xcr0();
    f.os_ymm = (xcr0 & 0x6) == 0x6;
    f.os_zmm = f.os_ymm && (xcr0 & 0xE0) == 0xE0;
  }
  if (__get_cpuid_max(0, nullptr) >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    f.avx2 = b & bit_AVX2;
    f.avx512f = b & bit_AVX512F;
    f.avx512dq = b & bit_AVX512DQ;
    f.avx512bw = b & bit_AVX512BW;
    f.avx512vl = b & bit_AVX512VL;
    if (a >= 1) {
      unsigned a1, b1, c1, d1;
      __cpuid_count(7, 1, a1, b1, c1, d1);
      f.avx512bf16 = a1 & (1u << 5);
    }
  }
  return f;
}

const Features& features() {
  static const Features f = detect();
  return f;
}

}  // namespace

bool has_bf16_dot_product() {
  const Features& f = features();
  return f.avx512bf16 && f.avx512f && f.avx512bw && f.avx512vl && f.os_zmm;
}

std::vector<const char*> missing_feature_names(Isa isa) {
  const Features& f = features();
  std::vector<const char*> missing;
  auto need = [&](bool have, const char* name) {
    if (!have) missing.push_back(name);
  };
  // Each list matches the compiler flags of its variant (cmake/cpu_isa.cmake).
  if (isa == Isa::avx512 || isa == Isa::avx2) {
    need(f.avx, "avx");
    need(f.avx2, "avx2");
    need(f.fma, "fma");
    need(f.f16c, "f16c");
    need(f.os_ymm, "operating-system support for the AVX registers");
  }
  if (isa == Isa::avx512) {
    need(f.avx512f, "avx512f");
    need(f.avx512bw, "avx512bw");
    need(f.avx512vl, "avx512vl");
    need(f.avx512dq, "avx512dq");
    need(f.os_zmm, "operating-system support for the AVX-512 registers");
  }
  if (isa == Isa::neon) missing.push_back("neon (an aarch64 processor)");
  return missing;
}

}  // namespace lltm::cpu
#endif
