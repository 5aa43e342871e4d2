// Conversions between the float types on the host, each correctly rounded
// (round to nearest, ties to even) with NaN, infinities and subnormals kept:
// bfloat16 and float16 widen exactly to float; float and double narrow to
// them by their bits; double narrows through float rounded to odd, which
// leaves the final rounding to nearest even (float keeps more than 2 bits
// beyond either half type's significand).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../ops/dtypes.h"

namespace lltm::cpu {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float float_of_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float widen(bfloat16_bits v) { return float_of_bits(uint32_t(v.bits) << 16); }

inline float widen(float16_bits v) {
  const uint32_t sign = uint32_t(v.bits & 0x8000u) << 16, exponent = (v.bits >> 10) & 0x1Fu, mantissa = v.bits & 0x3FFu;
  if (exponent == 0x1F) return float_of_bits(sign | 0x7F800000u | mantissa << 13);
  if (exponent == 0) {
    // Zero or subnormal: mantissa units of 2^-24, exact in float.
    const float magnitude = float(mantissa) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  return float_of_bits(sign | (exponent + 112) << 23 | mantissa << 13);
}

inline float widen(float v) { return v; }
inline double widen(double v) { return v; }

inline bfloat16_bits to_bfloat16(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return {uint16_t(u >> 16 | 0x0040u)};  // NaN, kept quiet
  // A carry out of the mantissa raises the exponent, up to infinity.
  return {uint16_t((u + 0x7FFFu + (u >> 16 & 1u)) >> 16)};
}

inline float16_bits to_float16(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = uint16_t(u >> 16 & 0x8000u);
  const uint32_t magnitude = u & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return {uint16_t(sign | 0x7E00u | (magnitude >> 13 & 0x3FFu))};  // NaN, kept quiet
  if (magnitude >= 0x47800000u) return {uint16_t(sign | 0x7C00u)};  // 2^16 and above, infinity included
  if (magnitude >= 0x38800000u) {
    // Normal in float16 (from 2^-14): rebias the exponent, round 13 bits off;
    // a carry reaches the exponent, and from 65520 on, infinity.
    const uint32_t rebiased = magnitude - 0x38000000u;
    return {uint16_t(sign | (rebiased + 0xFFFu + (rebiased >> 13 & 1u)) >> 13)};
  }
  if (magnitude <= 0x33000000u) return {sign};  // up to 2^-25, the tie with 0, which is even
  // Subnormal in float16: a count of 2^-24, rounded; 0x400 (2^-14) becomes the smallest normal.
  const uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126 - (magnitude >> 23);
  uint32_t units = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (units & 1u) != 0)) ++units;
  return {uint16_t(sign | units)};
}

// double to float rounded to odd: truncated, with the last bit set when inexact.
inline float round_to_odd(double d) {
  const float f = float(d);
  if (double(f) == d || d != d) return f;
  uint32_t u = float_bits(f);
  if ((double(f) < 0 ? -double(f) : double(f)) > (d < 0 ? -d : d)) u -= 1;  // rounded away from zero: step back
  return float_of_bits(u | 1u);
}

template <typename To>
To narrow(float v) {
  if constexpr (std::is_same_v<To, bfloat16_bits>)
    return to_bfloat16(v);
  else if constexpr (std::is_same_v<To, float16_bits>)
    return to_float16(v);
  else
    return To(v);
}

template <typename To>
To narrow(double v) {
  if constexpr (std::is_same_v<To, bfloat16_bits> || std::is_same_v<To, float16_bits>)
    return narrow<To>(round_to_odd(v));
  else
    return To(v);
}

// One element of From as To.
template <typename To, typename From>
To convert(From v) {
  return narrow<To>(widen(v));
}

}  // namespace lltm::cpu
