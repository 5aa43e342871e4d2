// The copy op on the CPU: a strided copy from src to dst, converting between
// their float types (float_convert.h), or of int32 indices; the library's
// staging of half types converts through it too.
#include <cstring>

#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../float_convert.h"
#include "../kernels.h"
#include "../strided_cpu.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename To, typename From>
void copy_rows(const lltm_tensor& dst, const lltm_tensor& src) {
  const int64_t ds = inner_stride(dst), ss = inner_stride(src);
  for_each_row(dst, [&](int64_t a, int64_t b, int64_t c, int64_t n) {
    To* d = static_cast<To*>(dst.data) + row_offset(dst, a, b, c);
    const From* s = static_cast<const From*>(src.data) + row_offset(src, a, b, c);
    if constexpr (std::is_same_v<To, From>) {
      if (ds == 1 && ss == 1)
        std::memcpy(d, s, size_t(n) * sizeof(To));
      else
        for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
    } else {
      for (int64_t i = 0; i < n; ++i) d[i * ds] = convert<To>(s[i * ss]);
    }
  });
}

}  // namespace

void run_COPY(const OpCall& call) {
  const lltm_tensor& dst = *call.tensors[slots::COPY::dst];
  const lltm_tensor& src = *call.tensors[slots::COPY::src];
  // Indices copy as they are (the library refuses a copy between an index and a float type).
  if (dst.dtype == LLTM_INT32) return copy_rows<int32_t, int32_t>(dst, src);
  dispatch_float(int32_t(dst.dtype), "lltm_copy", [&](auto to) {
    dispatch_float(int32_t(src.dtype), "lltm_copy", [&](auto from) {
      copy_rows<typename decltype(to)::storage, typename decltype(from)::storage>(dst, src);
    });
  });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
