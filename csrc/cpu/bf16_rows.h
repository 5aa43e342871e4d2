// Rows of bfloat16 to and from float32, a vector of sixteen at a time, for
// the kernels on AVX512_BF16 (bf16_gemm.h): loads widen exactly, stores round
// to nearest even once.
#pragma once

#include "bf16_gemm.h"

#ifdef LLTM_HAVE_BF16_KERNELS

#include <cstring>

#include "../lltm.h"
#include "vector_math.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE::bf16 {

// Sixteen bfloat16 widened to float32, and float32 rounded to bfloat16 (nearest even).
LLTM_BF16_TARGET inline FloatVector load16(const uint16_t* p) {
  // (The masked forms: GCC 12's unmasked ones read an undefined register and warn.)
  const __m512i w = _mm512_maskz_cvtepu16_epi32(__mmask16(0xFFFF), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return reinterpret_cast<FloatVector>(_mm512_maskz_slli_epi32(__mmask16(0xFFFF), w, 16));
}
LLTM_BF16_TARGET inline void store16(uint16_t* p, FloatVector v) {
  const __m256bh h = _mm512_cvtneps_pbh(reinterpret_cast<__m512>(v));
  std::memcpy(p, &h, sizeof h);
}

// dst[k] = src[k] (+ dst[k] when add) for k < n, rounded to bfloat16.
LLTM_BF16_TARGET inline void store_row(uint16_t* dst, const float* src, int64_t n, bool add) {
  constexpr int L = Vector<float>::lanes;
  int64_t k = 0;
  for (; k + L <= n; k += L) {
    FloatVector v = load<FloatVector>(src + k);
    if (add) v += load16(dst + k);
    store16(dst + k, v);
  }
  for (; k < n; ++k) dst[k] = bits_of((add ? value(dst[k]) : 0.0f) + src[k]);
}

// A parameter gradient's elements [at, at + n) = src (+ what they hold when add), in its own type:
// bfloat16 (rounded once), or float32 (mixed precision's gradients beside bfloat16 weights).
LLTM_BF16_TARGET inline void store_gradient(const lltm_tensor& t, int64_t at, const float* src, int64_t n, bool add) {
  if (t.dtype == LLTM_BFLOAT16) {
    store_row(static_cast<uint16_t*>(t.data) + at, src, n, add);
    return;
  }
  float* dst = static_cast<float*>(t.data) + at;
  for (int64_t k = 0; k < n; ++k) dst[k] = add ? dst[k] + src[k] : src[k];
}

// dst[k] = src[k] widened to float32, k < n.
LLTM_BF16_TARGET inline void load_row(float* dst, const uint16_t* src, int64_t n) {
  constexpr int L = Vector<float>::lanes;
  int64_t k = 0;
  for (; k + L <= n; k += L) store(dst + k, load16(src + k));
  for (; k < n; ++k) dst[k] = value(src[k]);
}

// out[k] = pair(lo[k], hi[k]) for k < n: two rows as the words of a product along them (hi null: zeros).
LLTM_BF16_TARGET inline void pair_rows(const uint16_t* lo, const uint16_t* hi, int64_t n, uint32_t* out) {
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    const __m512i l = _mm512_maskz_cvtepu16_epi32(__mmask16(0xFFFF), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo + k)));
    __m512i w = l;
    if (hi != nullptr) {
      const __m512i h = _mm512_maskz_cvtepu16_epi32(__mmask16(0xFFFF), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hi + k)));
      w = _mm512_or_si512(l, _mm512_maskz_slli_epi32(__mmask16(0xFFFF), h, 16));
    }
    _mm512_storeu_si512(out + k, w);
  }
  for (; k < n; ++k) out[k] = pair(lo[k], hi != nullptr ? hi[k] : 0);
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE::bf16

#endif
