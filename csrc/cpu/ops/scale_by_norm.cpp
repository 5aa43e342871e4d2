// The scale_by_norm op on the CPU: t *= min(1, max_norm / (sqrt(total_sq) + 1e-6)), and the norm where asked for.
#include <cmath>

#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../elementwise_rows.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_SCALE_BY_NORM(const OpCall& call) {
  namespace s = slots::SCALE_BY_NORM;
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_scale_by_norm", [&] {
    const double norm = std::sqrt(double(*static_cast<const scalar_t*>(call.tensors[s::total_sq]->data)));
    if (const lltm_tensor* out = call.tensors[s::norm]) *static_cast<scalar_t*>(out->data) = scalar_t(norm);
    const double factor = call.scalars[scalars::SCALE_BY_NORM::max_norm] / (norm + 1e-6);
    if (factor >= 1.0) return;
    const scalar_t f = scalar_t(factor);
    const lltm_tensor& t = *call.tensors[s::t];
    each_of_two<scalar_t>(t, t, [&](scalar_t& o, scalar_t x) { o = x * f; });
  });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
