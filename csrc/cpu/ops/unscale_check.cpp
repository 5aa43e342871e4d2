// The unscale_check op on the CPU: t *= inv_scale, found_inf = 1 where t held a non-finite element.
#include <cmath>

#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../elementwise_rows.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_UNSCALE_CHECK(const OpCall& call) {
  namespace s = slots::UNSCALE_CHECK;
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_unscale_check", [&] {
    const scalar_t inv_scale = scalar_t(call.scalars[scalars::UNSCALE_CHECK::inv_scale]);
    const lltm_tensor& t = *call.tensors[s::t];
    // x - x is 0 for every finite x and NaN for an infinity or a NaN: one sum, no branch per element.
    scalar_t probe = 0;
    each_of_two<scalar_t>(t, t, [&](scalar_t& o, scalar_t x) {
      probe += x - x;
      o = x * inv_scale;
    });
    if (!std::isnan(probe)) return;
    *static_cast<scalar_t*>(call.tensors[s::found_inf]->data) = scalar_t(1);
  });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
