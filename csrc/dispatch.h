// Where a runtime dtype becomes C types, generated from lltm_ops.def's
// dtypes: dispatch_float gives the body a pair (storage type, compute type),
// as llm.c's floatX (bfloat16 and float16 stored, float computed; float64
// computed in float64); LLTM_DISPATCH_FLOATING_TYPES gives the kernels,
// which see compute types only, `scalar_t`.
#pragma once

#include <string>

#include "ops/dtypes.h"
#include "status.h"

namespace lltm {

template <typename Storage, typename Compute>
struct FloatTypes {
  using storage = Storage;
  using compute = Compute;
};

[[noreturn]] inline void refuse_dtype(int32_t dtype, const char* fn, const char* what) {
  fail(LLTM_ERR_INVALID_DTYPE, std::string(fn) + ": dtype " + std::to_string(dtype) + " is not " + what);
}

// body(FloatTypes<storage, compute>{}) for any FLOAT dtype.
template <typename Body>
decltype(auto) dispatch_float(int32_t dtype, const char* fn, Body&& body) {
  switch (dtype) {
#define LLTM_OP(ID, code, entry, sizes, flags)
#define LLTM_SLOT(name, role, shape)
#define LLTM_SCALAR(name, kind, lo, hi)
#define LLTM_DTYPE(ID, code, name, bytes, cls)                                                        \
  case code:                                                                                          \
    if constexpr (is_float_dtype(code))                                                               \
      return body(FloatTypes<StorageOf<code>::type, StorageOf<compute_dtype(code)>::type>{});         \
    break;
#include "lltm_ops.def"
#undef LLTM_DTYPE
  }
  refuse_dtype(dtype, fn, "a float type");
}

// body(FloatTypes<T, T>{}) for the compute types (float32, float64).
template <typename Body>
decltype(auto) dispatch_compute(int32_t dtype, const char* fn, Body&& body) {
  switch (dtype) {
#define LLTM_DTYPE(ID, code, name, bytes, cls)                                   \
  case code:                                                             \
    if constexpr (is_compute_dtype(code))                                \
      return body(FloatTypes<StorageOf<code>::type, StorageOf<code>::type>{}); \
    break;
#include "lltm_ops.def"
#undef LLTM_DTYPE
#undef LLTM_OP
#undef LLTM_SLOT
#undef LLTM_SCALAR
  }
  refuse_dtype(dtype, fn, "a compute type (float32 or float64)");
}

}  // namespace lltm

#define LLTM_DISPATCH_FLOATING_TYPES(DTYPE, NAME, ...)                               \
  ::lltm::dispatch_compute(DTYPE, NAME, [&](auto types_) {                            \
    using scalar_t = typename decltype(types_)::compute;                              \
    return __VA_ARGS__();                                                             \
  })
