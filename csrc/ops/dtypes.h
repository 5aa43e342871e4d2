// The element types of lltm_ops.def as data: bytes, name, class and the type
// a kernel computes in, for every backend.
#pragma once

#include <cstdint>

#include "lltm.h"

namespace lltm {

enum class DtypeClass { FLOAT, INDEX, BYTES };

struct DtypeInfo {
  int32_t code;
  const char* name;
  int64_t bytes;
  DtypeClass cls;
};

#define LLTM_OP(ID, code, entry, sizes, flags)
#define LLTM_SLOT(name, role, shape)
#define LLTM_SCALAR(name, kind, lo, hi)
#define LLTM_DTYPE(ID, code, name, bytes, cls) {code, name, bytes, DtypeClass::cls},
inline constexpr DtypeInfo kDtypes[] = {
#include "lltm_ops.def"
};
#undef LLTM_DTYPE
#undef LLTM_OP
#undef LLTM_SLOT
#undef LLTM_SCALAR

constexpr int32_t kDtypeCount = int32_t(sizeof kDtypes / sizeof kDtypes[0]);

constexpr bool codes_are_positions() {
  for (int32_t i = 0; i < kDtypeCount; ++i)
    if (kDtypes[i].code != i) return false;
  return true;
}
static_assert(codes_are_positions() && kDtypeCount == LLTM_DTYPE_END, "lltm_ops.def numbers its dtypes 0, 1, 2, ...");

// nullptr for a code that is no dtype.
constexpr const DtypeInfo* dtype_info(int64_t code) {
  return code >= 0 && code < kDtypeCount ? &kDtypes[code] : nullptr;
}

constexpr bool is_float_dtype(int64_t code) {
  return code >= 0 && code < kDtypeCount && kDtypes[code].cls == DtypeClass::FLOAT;
}

constexpr bool is_index_dtype(int64_t code) {
  return code >= 0 && code < kDtypeCount && kDtypes[code].cls == DtypeClass::INDEX;
}

// The type a FLOAT dtype is computed in: itself from 4 bytes up, float32
// below (bfloat16 and float16 are stored, not computed in).
constexpr int32_t compute_dtype(int32_t code) {
  return kDtypes[code].bytes >= kDtypes[LLTM_FLOAT32].bytes ? code : int32_t(LLTM_FLOAT32);
}

constexpr bool is_compute_dtype(int32_t code) { return is_float_dtype(code) && compute_dtype(code) == code; }

// The float32 matmul precision (LLTM_MATMUL_PRECISION_*) of a call of a half type computed in float32: its
// products may round their operands to what its own type holds, as its own kernels would (lltm.h): bfloat16 to
// bfloat16 (MEDIUM), float16 to TF32 (HIGH), whose 10-bit mantissa holds float16's; `precision` where it
// allows more.
constexpr int32_t half_call_precision(int32_t half, int32_t precision) {
  const int32_t allowed = half == LLTM_BFLOAT16 ? LLTM_MATMUL_PRECISION_MEDIUM : LLTM_MATMUL_PRECISION_HIGH;
  return precision < allowed ? allowed : precision;
}

// 16-bit storage of the half types: bits only, converted by each backend.
struct bfloat16_bits {
  uint16_t bits;
};
struct float16_bits {
  uint16_t bits;
};

// The C type that stores each dtype.
template <int32_t Code>
struct StorageOf;
template <>
struct StorageOf<LLTM_FLOAT32> {
  using type = float;
};
template <>
struct StorageOf<LLTM_FLOAT64> {
  using type = double;
};
template <>
struct StorageOf<LLTM_BFLOAT16> {
  using type = bfloat16_bits;
};
template <>
struct StorageOf<LLTM_FLOAT16> {
  using type = float16_bits;
};
template <>
struct StorageOf<LLTM_UINT8> {
  using type = uint8_t;
};
template <>
struct StorageOf<LLTM_INT32> {
  using type = int32_t;
};

}  // namespace lltm
