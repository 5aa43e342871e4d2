// The float types of lltm_ops.def as device types (their sizes checked
// against the table's), a dispatch from a runtime dtype to the type, and the
// conversions between them, each rounding once to nearest even.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "dispatch.h"
#include "lltm.h"
#include "ops/dtypes.h"

namespace lltm::cuda {

static_assert(kDtypes[LLTM_FLOAT32].bytes == sizeof(float) && kDtypes[LLTM_FLOAT64].bytes == sizeof(double) &&
                  kDtypes[LLTM_BFLOAT16].bytes == sizeof(__nv_bfloat16) &&
                  kDtypes[LLTM_FLOAT16].bytes == sizeof(__half),
              "the device types have the sizes lltm_ops.def declares");

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls body(TypeTag<T>{}) with T the device type of the float dtype
// `dtype`; fn names the entry point in the refusal of any other dtype.
template <typename Body>
void with_float_type(int32_t dtype, const char* fn, Body&& body) {
  switch (dtype) {
    case LLTM_FLOAT32:
      return body(TypeTag<float>{});
    case LLTM_FLOAT64:
      return body(TypeTag<double>{});
    case LLTM_BFLOAT16:
      return body(TypeTag<__nv_bfloat16>{});
    case LLTM_FLOAT16:
      return body(TypeTag<__half>{});
    default:
      refuse_dtype(dtype, fn, "a float type (float32, float64, bfloat16 or float16)");
  }
}

// The dtype of a kernel's compute type.
template <typename T>
constexpr int32_t dtype_of();
template <>
constexpr int32_t dtype_of<float>() {
  return LLTM_FLOAT32;
}
template <>
constexpr int32_t dtype_of<double>() {
  return LLTM_FLOAT64;
}
template <>
constexpr int32_t dtype_of<__nv_bfloat16>() {
  return LLTM_BFLOAT16;
}
template <>
constexpr int32_t dtype_of<__half>() {
  return LLTM_FLOAT16;
}

// A value in the type that holds it exactly: float for the half types.
__host__ __device__ __forceinline__ float widen(__half v) { return __half2float(v); }
__host__ __device__ __forceinline__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__host__ __device__ __forceinline__ float widen(float v) { return v; }
__host__ __device__ __forceinline__ double widen(double v) { return v; }

// The type a value of T is accumulated in: float for the half types.
template <typename T>
using Accumulate = decltype(widen(T()));

// Whether T is one of the half types (stored narrower than it is computed).
template <typename T>
constexpr bool kIsHalf = !std::is_same_v<Accumulate<T>, T>;

// A float or double rounded to T, to nearest even (exact where T holds it);
// from double straight to the half types, never through float, which would
// round twice.
template <typename T>
struct RoundTo;
template <>
struct RoundTo<float> {
  __host__ __device__ static float from(float v) { return v; }
  __host__ __device__ static float from(double v) { return float(v); }
};
template <>
struct RoundTo<double> {
  __host__ __device__ static double from(float v) { return double(v); }
  __host__ __device__ static double from(double v) { return v; }
};
template <>
struct RoundTo<__nv_bfloat16> {
  __host__ __device__ static __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); }
  __host__ __device__ static __nv_bfloat16 from(double v) { return __double2bfloat16(v); }
};
template <>
struct RoundTo<__half> {
  __host__ __device__ static __half from(float v) { return __float2half_rn(v); }
  __host__ __device__ static __half from(double v) { return __double2half(v); }
};

// v in type D: widened exactly, then rounded once.
template <typename D, typename S>
__host__ __device__ __forceinline__ D convert(S v) {
  return RoundTo<D>::from(widen(v));
}

}  // namespace lltm::cuda
