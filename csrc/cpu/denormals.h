// Subnormal numbers flushed to zero while a kernel runs. In training, the
// slopes of saturated gates (sigma'(g) for large |g|) and the gate gradients
// they scale fall below the smallest normal float; every multiply-add that
// takes or makes such a number then costs x86 cores a microcode assist of
// about a hundred cycles, and a sequence backward slows by several times.
// Treated as zero (inputs, DAZ) and made zero (results, FTZ), they cost
// nothing, and change a result only where a term below 2^-126 (float32) or
// 2^-1022 (float64) would have been added. The thread's previous mode comes
// back when the scope ends: the callers' threads (a JavaScript runtime's
// among them) keep IEEE subnormals.
#pragma once

#include "thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace lltm::cpu {

class FlushDenormals {
 public:
#if defined(__x86_64__) || defined(__i386__)
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero); }
  ~FlushDenormals() { _mm_setcsr(saved_); }

 private:
  static constexpr unsigned kFlushToZero = 0x8000, kDenormalsAreZero = 0x0040;
  unsigned saved_;
#elif defined(__aarch64__)
  FlushDenormals() {
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(saved_) : : "memory");
    const unsigned long flushed = saved_ | kFlushToZero;
    __asm__ __volatile__("msr fpcr, %0" : : "r"(flushed) : "memory");
  }
  ~FlushDenormals() { __asm__ __volatile__("msr fpcr, %0" : : "r"(saved_) : "memory"); }

 private:
  // FPCR.FZ: single and double subnormals, inputs and results (half precision has its own bit, left alone).
  static constexpr unsigned long kFlushToZero = 1ul << 24;
  unsigned long saved_;
#else
  FlushDenormals() = default;
#endif
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;
};

// A part, out of line: the compiler moves no arithmetic of an inlined body
// across the mode switches around a call.
template <typename F>
[[gnu::noinline]] void run_part(F& body, int part, int n_parts) {
  body(part, n_parts);
}

// parallel() whose every part runs with subnormals flushed, on whichever thread takes it.
template <typename F>
void parallel_flushed(int parts, F&& body) {
  parallel(parts, [&](int part, int n_parts) {
    FlushDenormals flush;
    run_part(body, part, n_parts);
  });
}

}  // namespace lltm::cpu
