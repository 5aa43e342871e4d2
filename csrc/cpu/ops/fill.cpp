// The fill op on the CPU: every element of dst set to the value in dst's type (float or int32).
#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../kernels.h"
#include "../strided_cpu.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_FILL(const OpCall& call) {
  const lltm_tensor& dst = *call.tensors[slots::FILL::dst];
  const double value = call.scalars[scalars::FILL::value];
  if (dst.dtype == LLTM_INT32) {
    const int64_t ds = inner_stride(dst);
    for_each_row(dst, [&](int64_t a, int64_t b, int64_t c, int64_t n) {
      int32_t* d = static_cast<int32_t*>(dst.data) + row_offset(dst, a, b, c);
      for (int64_t i = 0; i < n; ++i) d[i * ds] = int32_t(value);
    });
    return;
  }
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_fill", [&] {
    const scalar_t v = scalar_t(value);
    const int64_t ds = inner_stride(dst);
    for_each_row(dst, [&](int64_t a, int64_t b, int64_t c, int64_t n) {
      scalar_t* d = static_cast<scalar_t*>(dst.data) + row_offset(dst, a, b, c);
      for (int64_t i = 0; i < n; ++i) d[i * ds] = v;
    });
  });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
