// Activation functions and their derivatives.
//
// float64 uses the C library's functions (correctly rounded or within one
// ulp), so that results agree with the float64 reference to ~1e-15.
// float32 uses branch-free polynomial forms (Cephes' minimax coefficients),
// written once for a scalar `float` and for a GCC/Clang vector of floats: the
// C library's expf/tanhf are scalar calls and would cost more than the GEMM
// at small sizes. They are accurate to a few float32 ulps.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gemm.h"

#if defined(__SSE__)
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

using FloatVector = Vector<float>::type;
typedef uint32_t UIntVector __attribute__((vector_size(kVectorBytes)));

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double tanh(double x) { return std::tanh(x); }
inline double elu(double x) { return x > 0.0 ? x : std::expm1(x); }
inline double elu_grad(double x) { return x > 0.0 ? 1.0 : std::exp(x); }

// Unsigned integer views of float and FloatVector, for building powers of two
// (unsigned, so that the bit arithmetic wraps instead of overflowing on NaN).
template <typename F>
struct UIntOf {
  using type = uint32_t;
};
template <>
struct UIntOf<FloatVector> {
  using type = UIntVector;
};

// max(lo, x) and min(hi, x) lane by lane, one instruction each where
// `?:` on vectors takes a compare and a blend (a sixth of the forward
// pass's pointwise time). NaN stays NaN: maxps and minps return their second
// operand when either is NaN, NEON's fmax and fmin a NaN when either is.
inline float at_least(float lo, float x) { return x < lo ? lo : x; }
inline float at_most(float hi, float x) { return x > hi ? hi : x; }
#if defined(__AVX512F__)
// (The masked forms: GCC 12's unmasked ones read an undefined register and warn.)
inline FloatVector at_least(FloatVector lo, FloatVector x) {
  return reinterpret_cast<FloatVector>(
      _mm512_maskz_max_ps(__mmask16(0xFFFF), reinterpret_cast<__m512>(lo), reinterpret_cast<__m512>(x)));
}
inline FloatVector at_most(FloatVector hi, FloatVector x) {
  return reinterpret_cast<FloatVector>(
      _mm512_maskz_min_ps(__mmask16(0xFFFF), reinterpret_cast<__m512>(hi), reinterpret_cast<__m512>(x)));
}
#elif defined(__AVX__)
inline FloatVector at_least(FloatVector lo, FloatVector x) {
  return reinterpret_cast<FloatVector>(_mm256_max_ps(reinterpret_cast<__m256>(lo), reinterpret_cast<__m256>(x)));
}
inline FloatVector at_most(FloatVector hi, FloatVector x) {
  return reinterpret_cast<FloatVector>(_mm256_min_ps(reinterpret_cast<__m256>(hi), reinterpret_cast<__m256>(x)));
}
#elif defined(__SSE__)
inline FloatVector at_least(FloatVector lo, FloatVector x) {
  return reinterpret_cast<FloatVector>(_mm_max_ps(reinterpret_cast<__m128>(lo), reinterpret_cast<__m128>(x)));
}
inline FloatVector at_most(FloatVector hi, FloatVector x) {
  return reinterpret_cast<FloatVector>(_mm_min_ps(reinterpret_cast<__m128>(hi), reinterpret_cast<__m128>(x)));
}
#elif defined(__ARM_NEON)
inline FloatVector at_least(FloatVector lo, FloatVector x) {
  return reinterpret_cast<FloatVector>(vmaxq_f32(reinterpret_cast<float32x4_t>(lo), reinterpret_cast<float32x4_t>(x)));
}
inline FloatVector at_most(FloatVector hi, FloatVector x) {
  return reinterpret_cast<FloatVector>(vminq_f32(reinterpret_cast<float32x4_t>(hi), reinterpret_cast<float32x4_t>(x)));
}
#else
inline FloatVector at_least(FloatVector lo, FloatVector x) { return x < lo ? lo : x; }
inline FloatVector at_most(FloatVector hi, FloatVector x) { return x > hi ? hi : x; }
#endif

// e^x as scale * (1 + m): scale = 2^n and m = e^r - 1 for the reduced
// argument r = x - n ln2, |r| <= ln2/2. From these one polynomial gives both
// e^x = scale + scale m and e^x - 1 = scale m + (scale - 1) to full relative
// accuracy (near x = 0, n = 0 and e^x - 1 is m itself: no cancellation).
// F is float or FloatVector; comparisons and `?:` work element-wise on both.
template <typename F>
struct ExpParts {
  F scale, m;
  F exp() const { return (m + 1.0f) * scale; }
  F expm1() const { return scale * m + (scale - 1.0f); }
};

template <typename F>
inline ExpParts<F> exp_parts(F x) {
  // e^x and 2^n stay normal floats
  x = at_most(F{} + 88.0f, at_least(F{} - 87.0f, x));
  // Round x/ln2 to the nearest integer n with the 1.5*2^23 trick: the sum's
  // low mantissa bits then hold n itself, which makes 2^n without a conversion.
  const float shifter = 12582912.0f;
  const F shifted = x * 1.44269504088896341f + shifter;
  const F n = shifted - shifter;
  const F r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  ExpParts<F> e;
  e.m = (((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r +
          1.6666665459e-1f) * r + 5.0000001201e-1f) * r * r + r;
  using U = typename UIntOf<F>::type;
  U bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  bits = (bits - 0x4B400000u + 127u) << 23;
  std::memcpy(&e.scale, &bits, sizeof e.scale);
  return e;
}

template <typename F>
inline F fexp(F x) {
  return exp_parts(x).exp();
}

// e^x - 1, accurate near 0 where e^x - 1 would cancel.
template <typename F>
inline F fexpm1(F x) {
  return exp_parts(x).expm1();
}

template <typename F>
inline F sigmoid(F x) {
  return 1.0f / (1.0f + fexp(F{} - x));
}

// (e^2x - 1) / (e^2x + 1) with e^2x - 1 from fexpm1: a quotient of two
// accurate terms, with no cancellation near 0 and no branch.
template <typename F>
inline F tanh(F x) {
  const F em = fexpm1(x + x);
  return em / (em + 2.0f);
}

template <typename F>
inline F elu(F x) {
  const F negative = fexpm1(x);
  return x > 0.0f ? x : negative;
}

template <typename F>
inline F elu_grad(F x) {
  const F e = fexp(x);
  return x > 0.0f ? F{} + 1.0f : e;
}

// Unaligned loads and stores of a vector (or a scalar) from element pointers.
template <typename F, typename T>
inline F load(const T* p) {
  F v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename F, typename T>
inline void store(T* p, F v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
