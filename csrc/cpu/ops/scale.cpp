// The scale op on the CPU: out = alpha * x, element by element (out may be x).
#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../elementwise_rows.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_SCALE(const OpCall& call) {
  namespace s = slots::SCALE;
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_scale", [&] {
    const scalar_t alpha = scalar_t(call.scalars[scalars::SCALE::alpha]);
    each_of_two<scalar_t>(*call.tensors[s::out], *call.tensors[s::x], [&](scalar_t& o, scalar_t x) { o = alpha * x; });
  });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
