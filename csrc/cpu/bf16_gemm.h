// Products of bfloat16 matrices with float32 sums on AVX512_BF16's vdpbf16ps,
// which multiplies pairs of bfloat16 values and adds both products to one
// float32 lane: C(i, j) = sum_q A(i, q) . B(q, j), where A(i, q) and B(q, j)
// are pairs of bfloat16 (steps 2q and 2q + 1 of the sum) held in one 32-bit
// word. A's pair is broadcast to every lane; B is laid out as the instruction
// wants it ("VNNI" panels): kNR columns of pairs, q rows kNR words apart.
//
// Only the AVX-512 variant has these kernels, compiled for the extension by
// a target attribute (the variant's flags stay those of every AVX-512 CPU):
// isa_dispatch.cpp calls them only where the processor reports AVX512_BF16.
#pragma once

#if defined(__x86_64__) && defined(__AVX512F__)
#define LLTM_HAVE_BF16_KERNELS 1

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "float_convert.h"

#define LLTM_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma")))

namespace lltm::cpu::LLTM_ISA_NAMESPACE::bf16 {

constexpr int kMR = 8;   // rows of a tile: 8 x 2 accumulators of the 32 registers
constexpr int kNR = 32;  // columns of a tile: two vectors of 16 float32

// A bfloat16's bits as a float.
inline float value(uint16_t bits) { return float_of_bits(uint32_t(bits) << 16); }
inline uint16_t bits_of(float f) { return to_bfloat16(f).bits; }

// Two bfloat16 as the 32-bit pair the products read, `lo` first along the sum.
inline uint32_t pair(uint16_t lo, uint16_t hi) { return uint32_t(lo) | uint32_t(hi) << 16; }

// The kMR x kNR float tile at c (rows ldc apart) = sum over q < k2 of the pairs of rows a[i] (q-th
// word at a[i][q]) times the packed panel bp (kNR words a step), added to what c holds when `add`
// (a sum split along q). Rows of a past the edge may repeat a row.
LLTM_BF16_TARGET __attribute__((noinline)) inline void tile(int64_t k2, const uint32_t* const* a, const uint32_t* bp,
                                                            float* c, int64_t ldc, bool add = false) {
  __m512 acc[kMR][2];
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i) {
    acc[i][0] = add ? _mm512_loadu_ps(c + i * ldc) : _mm512_setzero_ps();
    acc[i][1] = add ? _mm512_loadu_ps(c + i * ldc + 16) : _mm512_setzero_ps();
  }
  const uint32_t* r[kMR];
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i) r[i] = a[i];
  for (int64_t q = 0; q < k2; ++q, bp += kNR) {
    const __m512bh b0 = (__m512bh)_mm512_load_si512(bp);
    const __m512bh b1 = (__m512bh)_mm512_load_si512(bp + 16);
#pragma GCC unroll 8
    for (int i = 0; i < kMR; ++i) {
      const __m512bh x = (__m512bh)_mm512_set1_epi32(int(r[i][q]));
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], x, b0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], x, b1);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i) {
    _mm512_storeu_ps(c + i * ldc, acc[i][0]);
    _mm512_storeu_ps(c + i * ldc + 16, acc[i][1]);
  }
}

// Panels of pairs from a row-major bfloat16 matrix m (rows ld apart) read as
// B(p, j) = m[j][p] (the transposed operand), p < k, j in [j0, j0 + kNR):
// word q of column j is (m[j][2q], m[j][2q + 1]), 0 past k or past n rows.
inline void pack_transposed(const uint16_t* m, int64_t ld, int64_t k, int64_t n, int64_t j0, uint32_t* panel) {
  const int64_t k2 = (k + 1) / 2;
  for (int64_t jj = 0; jj < kNR; ++jj) {
    const int64_t j = j0 + jj;
    if (j >= n) {
      for (int64_t q = 0; q < k2; ++q) panel[q * kNR + jj] = 0;
      continue;
    }
    const uint16_t* row = m + j * ld;
    for (int64_t q = 0; q < k / 2; ++q) {
      uint32_t w;
      std::memcpy(&w, row + 2 * q, sizeof w);
      panel[q * kNR + jj] = w;
    }
    if (k % 2 != 0) panel[(k2 - 1) * kNR + jj] = pair(row[k - 1], 0);
  }
}

// Panels of pairs from a row-major bfloat16 matrix m (rows ld apart) read as
// B(p, j) = m[p][j], p < k, j in [j0, j0 + kNR) and below n: word q of column
// j is (m[2q][j], m[2q + 1][j]), 0 past k or n.
inline void pack_rows(const uint16_t* m, int64_t ld, int64_t k, int64_t n, int64_t j0, uint32_t* panel) {
  const int64_t k2 = (k + 1) / 2, cols = n - j0 < kNR ? n - j0 : kNR;
  for (int64_t q = 0; q < k2; ++q) {
    const uint16_t* lo = m + 2 * q * ld + j0;
    const uint16_t* hi = 2 * q + 1 < k ? lo + ld : nullptr;
    uint32_t* out = panel + q * kNR;
    for (int64_t jj = 0; jj < cols; ++jj) out[jj] = pair(lo[jj], hi != nullptr ? hi[jj] : 0);
    for (int64_t jj = cols; jj < kNR; ++jj) out[jj] = 0;
  }
}

// Rows of pairs, padded to k2 words: row i's word q is (m[i][2q], m[i][2q + 1]), 0 past k.
inline void pack_pairs(const uint16_t* row, int64_t k, uint32_t* out) {
  for (int64_t q = 0; q < k / 2; ++q) std::memcpy(out + q, row + 2 * q, sizeof(uint32_t));
  if (k % 2 != 0) out[k / 2] = pair(row[k - 1], 0);
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE::bf16

#endif
