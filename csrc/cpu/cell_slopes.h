// The LLTM cell's activations with the slopes its backward needs, formed
// from the gates in forms that keep their relative accuracy where the
// activations saturate: shared by the sequence engine (sequence_cpu.cpp),
// which keeps the slopes in its reserve, and the step's backward
// (lltm_cpu.cpp), which forms them from the saved gates.
#pragma once

#include <cmath>

#if defined(__SSE__)
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#include "vector_math.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

// The cell's activations and, for training (Keep), the slopes its backward
// needs, for one element or one vector of elements. The slopes are formed
// here, where the gates are known, in forms that keep their relative
// accuracy where the activations saturate: sigma'(g) = e^-g sigma(g)^2
// rather than sigma (1 - sigma), and tanh'(c) = 4 e^-2|c| / (1 + e^-2|c|)^2
// rather than 1 - tanh(c)^2, whose cancellation costs float32 all its
// digits once |c| passes ~8 (and float64 half of them).
template <typename F>
struct Gates {
  F i, o, z;
  F d_i, d_o, d_z;  // sigma'(g0), sigma'(g1), elu'(g2)
};

template <typename F>
struct Tanh {
  F t, d;  // tanh(c), tanh'(c)
};

// 1/x for x in [1, 2^127]: the processor's reciprocal estimate and Newton
// steps (within 2 ulps), for a division's latency a third or less. x86's
// estimate has 12 bits (rcp14's 14), so one step reaches float32's 24; NEON's
// frecpe has 8, so it takes two, each one fused frecps (2 - x r) and a multiply.
inline float reciprocal(float x) { return 1.0f / x; }
#if defined(__ARM_NEON)
inline FloatVector reciprocal(FloatVector x) {
  const float32x4_t v = reinterpret_cast<float32x4_t>(x);
  float32x4_t r = vrecpeq_f32(v);
  r = vmulq_f32(r, vrecpsq_f32(v, r));
  r = vmulq_f32(r, vrecpsq_f32(v, r));
  return reinterpret_cast<FloatVector>(r);
}
#elif defined(__SSE__)
inline FloatVector reciprocal(FloatVector x) {
#if defined(__AVX512F__)
  // (The masked form: GCC 12's unmasked one reads an undefined register and warns.)
  const FloatVector r =
      reinterpret_cast<FloatVector>(_mm512_maskz_rcp14_ps(__mmask16(0xFFFF), reinterpret_cast<__m512>(x)));
#elif defined(__AVX__)
  const FloatVector r = reinterpret_cast<FloatVector>(_mm256_rcp_ps(reinterpret_cast<__m256>(x)));
#else
  const FloatVector r = reinterpret_cast<FloatVector>(_mm_rcp_ps(reinterpret_cast<__m128>(x)));
#endif
  return r * (2.0f - x * r);
}
#else
inline FloatVector reciprocal(FloatVector x) { return 1.0f / x; }
#endif

// float and FloatVector: vector_math.h's polynomial forms, one exponential per function.
template <bool Keep, typename F>
inline Gates<F> gates(F g0, F g1, F g2) {
  Gates<F> r;
  const F e0 = fexp(F{} - g0), e1 = fexp(F{} - g1);
  r.i = reciprocal(1.0f + e0);
  r.o = reciprocal(1.0f + e1);
  // elu as vector_math.h's, with e^g2 from the same parts for its slope.
  const ExpParts<F> p2 = exp_parts(g2);
  const F negative = p2.expm1();
  r.z = g2 > 0.0f ? g2 : negative;
  if (Keep) {
    // fexp clamps its argument to [-87, 88]: a slope below e^-87 is 0 (as float32 would round it), not e^-87.
    r.d_i = g0 > 87.0f ? F{} : e0 * r.i * r.i;
    r.d_o = g1 > 87.0f ? F{} : e1 * r.o * r.o;
    const F d_z = g2 < -87.0f ? F{} : p2.exp();
    r.d_z = g2 > 0.0f ? F{} + 1.0f : d_z;
  }
  return r;
}

// tanh and its slope from the parts of one e^-2|c|: e^-2|c| - 1 from them
// keeps tanh accurate near zero (1 - e^-2|c| would cancel there).
template <bool Keep, typename F>
inline Tanh<F> tanh_of(F c) {
  const F a = c < 0.0f ? F{} - c : c;
  const ExpParts<F> e = exp_parts(F{} - (a + a));
  const F em = e.expm1();  // e^-2|c| - 1, in (-1, 0]
  const F q = reciprocal(em + 2.0f);              // 1 / (1 + e^-2|c|)
  const F large = (F{} - em) * q;
  Tanh<F> r;
  r.t = c < 0.0f ? F{} - large : large;
  if (Keep) {
    const F ec = e.exp();
    r.d = a < 43.5f ? 4.0f * ec * q * q : F{};  // e^-2|c| clamped below e^-87: see gates()
  }
  return r;
}

// double: the C library's functions, one call per activation, the slopes
// formed from what those calls return (training adds no call).
inline double sigmoid_slope(double e, double s, double g) {
  return g < -700.0 ? 0.0 : e * s * s;  // e = e^-g; past -700 it is inf and the slope 0
}

// sigma'(g) from g and s = sigma(g) already known (the step's backward has
// the forward's gates): e^-g s^2 as gates() forms it. float64 takes s (1 - s)
// where g <= 0, which is as accurate there (1 - s >= 1/2 cancels nothing) and
// spares the C library's exp.
template <typename F>
inline F sigmoid_slope_of(F g, F s) {
  const F e = fexp(F{} - g);
  return g > 87.0f ? F{} : e * s * s;
}
inline double sigmoid_slope_of(double g, double s) {
  return g <= 0.0 ? s * (1.0 - s) : sigmoid_slope(std::exp(-g), s, g);
}

template <bool Keep>
inline Gates<double> gates(double g0, double g1, double g2) {
  Gates<double> r;
  const double e0 = std::exp(-g0), e1 = std::exp(-g1);
  r.i = 1.0 / (1.0 + e0);
  r.o = 1.0 / (1.0 + e1);
  // elu: expm1 where e^g - 1 would cancel, else e^g itself, which is also the slope.
  const double e2 = g2 > -0.5 ? 0.0 : std::exp(g2);
  r.z = g2 > 0.0 ? g2 : g2 > -0.5 ? std::expm1(g2) : e2 - 1.0;
  if (Keep) {
    r.d_i = sigmoid_slope(e0, r.i, g0);
    r.d_o = sigmoid_slope(e1, r.o, g1);
    r.d_z = g2 > 0.0 ? 1.0 : g2 > -0.5 ? r.z + 1.0 : e2;
  }
  return r;
}

// tanh from e^-2|c| where 1 - e^-2|c| does not cancel, with its slope
// 4 e^-2|c| / (1 + e^-2|c|)^2 from the same call.
template <bool Keep>
inline Tanh<double> tanh_of(double c) {
  Tanh<double> r;
  const double a = std::fabs(c);
  if (a < 0.5) {
    r.t = std::tanh(c);
    if (Keep) r.d = 1.0 - r.t * r.t;
    return r;
  }
  const double ec = std::exp(-2.0 * a), q = 1.0 / (1.0 + ec);
  r.t = std::copysign((1.0 - ec) * q, c);
  if (Keep) r.d = 4.0 * ec * q * q;
  return r;
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
