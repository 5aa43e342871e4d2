// The LLTM cell's scalar math on the device, shared by the step kernels and
// the sequence engine. Each function has a float and a double overload so
// that double stays double throughout (no float-only intrinsics on doubles).
#pragma once

namespace lltm::cuda {

__device__ __forceinline__ float exp_of(float x) { return expf(x); }
__device__ __forceinline__ double exp_of(double x) { return exp(x); }
__device__ __forceinline__ float expm1_of(float x) { return expm1f(x); }
__device__ __forceinline__ double expm1_of(double x) { return expm1(x); }
__device__ __forceinline__ float tanh_of(float x) { return tanhf(x); }
__device__ __forceinline__ double tanh_of(double x) { return tanh(x); }
__device__ __forceinline__ float cosh_of(float x) { return coshf(x); }
__device__ __forceinline__ double cosh_of(double x) { return cosh(x); }

template <typename T>
__device__ __forceinline__ T sigmoid(T x) {
  return T(1) / (T(1) + exp_of(-x));
}

// expm1 rather than exp(x) - 1, which loses digits near 0.
template <typename T>
__device__ __forceinline__ T elu(T x) {
  return x > T(0) ? x : expm1_of(x);
}

// The slopes of sigmoid and tanh from their arguments, in forms that keep
// their relative accuracy where the functions saturate: sigma(g) (1 -
// sigma(g)) and 1 - tanh(c)^2 subtract from 1 a value whose own rounding
// then dominates (at sigma(g) = 0.999 a float's last bit is 6e-5 of the
// slope), and a sequence's backward multiplies such slopes over every step.
template <typename T>
__device__ __forceinline__ T sigmoid_slope(T g) {
  return sigmoid(g) * sigmoid(-g);
}

// 1 / cosh(c)^2; cosh overflows to infinity past |c| of about 89 (float) or
// 710 (double), where the slope is below what the type resolves: 0.
template <typename T>
__device__ __forceinline__ T tanh_slope(T c) {
  const T ch = cosh_of(c);
  return T(1) / (ch * ch);
}

template <typename T>
__device__ __forceinline__ T elu_derivative(T x) {
  return x > T(0) ? T(1) : exp_of(x);
}

constexpr int kWarp = 32;

// One step of butterfly_sum: a lane keeps the half of its sums selected by
// its lane bit Half * (kWarp / Sums) and adds its partner's copy of that
// half. A template per step, so that every index is a constant and v stays
// in registers.
template <int Sums, int Half, typename T>
__device__ __forceinline__ void butterfly_step(T (&v)[Sums], int lane) {
  constexpr int offset = Half * (kWarp / Sums);
  const bool upper = lane & offset;
#pragma unroll
  for (int i = 0; i < Half; ++i) {
    const T send = upper ? v[i] : v[i + Half];
    const T keep = upper ? v[i + Half] : v[i];
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, offset);
  }
  if constexpr (Half > 1) butterfly_step<Sums, Half / 2>(v, lane);
}

// Sums each v[r] over the warp in far fewer shuffles than one reduction per
// sum; sum r lands in the kWarp / Sums lanes from r * (kWarp / Sums).
// Sums is a power of two, at most kWarp.
template <int Sums, typename T>
__device__ __forceinline__ T butterfly_sum(T (&v)[Sums], int lane) {
  static_assert(Sums >= 1 && Sums <= kWarp && (Sums & (Sums - 1)) == 0, "Sums is a power of two up to a warp");
  if constexpr (Sums > 1) butterfly_step<Sums, Sums / 2>(v, lane);
  T sum = v[0];
#pragma unroll
  for (int offset = kWarp / Sums / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  return sum;
}

// The smallest power of two >= n (n >= 1), for padding a butterfly's sums.
constexpr int pow2_at_least(int n) { return n <= 1 ? 1 : 2 * pow2_at_least((n + 1) / 2); }

}  // namespace lltm::cuda
