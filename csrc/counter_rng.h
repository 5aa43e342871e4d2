// A counter-based generator shared by the CPU and CUDA kernels: the draw of
// row `row` of a call keyed (seed, offset) is a pure function of the three,
// so that a sampling op draws the same numbers on every device, in any
// order of rows, and a run is reproduced from its seed.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define LLTM_HOST_DEVICE __host__ __device__
#else
#define LLTM_HOST_DEVICE
#endif

namespace lltm {

// splitmix64's finaliser: a bijection of 64-bit words that mixes every bit.
LLTM_HOST_DEVICE inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A double uniform in [0, 1) with 53 random bits.
LLTM_HOST_DEVICE inline double uniform01(uint64_t seed, uint64_t offset, uint64_t row) {
  const uint64_t key = mix64(seed + 0x9E3779B97F4A7C15ull);
  const uint64_t bits = mix64(key ^ mix64(offset + row + 0x632BE59BD9B4E019ull));
  return double(bits >> 11) * 0x1p-53;
}

// The index drawn from `n` non-negative weights read through at(j) with
// total `total` > 0, for uniform u: the first whose running sum passes
// u * total; rounding that leaves none picks the last positive weight.
template <typename At>
LLTM_HOST_DEVICE inline int32_t draw_index(At at, int64_t n, double total, double u) {
  const double target = u * total;
  double running = 0;
  int64_t last = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double w = double(at(j));
    if (w <= 0) continue;
    running += w;
    last = j;
    if (running > target) return int32_t(j);
  }
  return int32_t(last);
}

}  // namespace lltm
