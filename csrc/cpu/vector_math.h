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

// max(lo, x), min(hi, x) and |x| lane by lane, one instruction each where
// `?:` on vectors takes a compare and a blend (a sixth of the forward
// pass's pointwise time). NaN stays NaN: maxps and minps return their second
// operand when either is NaN.
inline float at_least(float lo, float x) { return x < lo ? lo : x; }
inline float at_most(float hi, float x) { return x > hi ? hi : x; }
inline float magnitude(float x) { return std::fabs(x); }
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
#else
inline FloatVector at_least(FloatVector lo, FloatVector x) { return x < lo ? lo : x; }
inline FloatVector at_most(FloatVector hi, FloatVector x) { return x > hi ? hi : x; }
#endif
inline FloatVector magnitude(FloatVector x) {
  UIntVector bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits &= 0x7FFFFFFFu;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// F is float or FloatVector; comparisons and `?:` work element-wise on both.
template <typename F>
inline F fexp(F x) {
  // e^x and 2^n stay normal floats
  x = at_most(F{} + 88.0f, at_least(F{} - 87.0f, x));
  // Round x/ln2 to the nearest integer n with the 1.5*2^23 trick: the sum's
  // low mantissa bits then hold n itself, which makes 2^n without a conversion.
  const float shifter = 12582912.0f;
  const F shifted = x * 1.44269504088896341f + shifter;
  const F n = shifted - shifter;
  const F r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  const F p =
      ((((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r +
         1.6666665459e-1f) * r + 5.0000001201e-1f) * r * r) + r + 1.0f;
  using U = typename UIntOf<F>::type;
  U bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  bits = (bits - 0x4B400000u + 127u) << 23;
  F scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

template <typename F>
inline F sigmoid(F x) {
  return 1.0f / (1.0f + fexp(F{} - x));
}

template <typename F>
inline F tanh(F x) {
  const F a = magnitude(x);
  const F z = x * x;
  // Near zero 1 - 2/(e^2x + 1) cancels, so a polynomial takes over below 0.625.
  const F small =
      ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z + 1.33314422036e-1f) * z -
       3.33332819422e-1f) * z * x + x;
  const F large = 1.0f - 2.0f / (fexp(a + a) + 1.0f);
  const F signed_large = x < 0.0f ? F{} - large : large;
  return a < 0.625f ? small : signed_large;
}

template <typename F>
inline F elu(F x) {
  // expm1 on (-0.5, 0] by its Taylor series, where e^x - 1 would cancel.
  const F taylor =
      x * (1.0f + x * (0.5f + x * (1.0f / 6 + x * (1.0f / 24 + x * (1.0f / 120 + x * (1.0f / 720 +
                                                                                      x * (1.0f / 5040 + x * (1.0f / 40320))))))));
  const F shifted = fexp(x) - 1.0f;
  const F negative = x > -0.5f ? taylor : shifted;
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
