// The hint a spin-wait loop gives the processor on each turn: it lets the
// other hardware thread of the core run and saves power, without giving up
// the CPU. The pool's spins are bounded by time, not turns, so the hint's
// length differs per processor without changing how long a thread spins.
#pragma once

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

namespace lltm::cpu {

inline void spin_pause() {
#if defined(__x86_64__) || defined(_M_X64)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace lltm::cpu
