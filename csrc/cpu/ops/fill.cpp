// The fill op on the CPU: every element of dst set to the value rounded once
// to dst's own type (float_convert.h), whatever that type is: the op converts
// itself, so a half-type dst is never staged through float32 (which would
// round twice).
#include <string>

#include "../../op_slots.h"
#include "../../status.h"
#include "../float_convert.h"
#include "../kernels.h"
#include "../strided_cpu.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void fill_with(const lltm_tensor& dst, T v) {
  const int64_t ds = inner_stride(dst);
  for_each_row(dst, [&](int64_t a, int64_t b, int64_t c, int64_t n) {
    T* d = static_cast<T*>(dst.data) + row_offset(dst, a, b, c);
    for (int64_t i = 0; i < n; ++i) d[i * ds] = v;
  });
}

}  // namespace

void run_FILL(const OpCall& call) {
  const lltm_tensor& dst = *call.tensors[slots::FILL::dst];
  const double value = call.scalars[scalars::FILL::value];
  switch (dst.dtype) {
    case LLTM_INT32:
      return fill_with(dst, int32_t(value));
    case LLTM_FLOAT32:
      return fill_with(dst, float(value));
    case LLTM_FLOAT64:
      return fill_with(dst, value);
    case LLTM_BFLOAT16:
      return fill_with(dst, convert<bfloat16_bits>(value));
    case LLTM_FLOAT16:
      return fill_with(dst, convert<float16_bits>(value));
  }
  fail(LLTM_ERR_INTERNAL, "lltm_fill: dst has dtype " + std::to_string(dst.dtype) + ", which validation refuses");
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
