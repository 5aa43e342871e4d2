// The add op on the CPU: out = a + alpha * b, element by element (out may be a or b).
#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../elementwise_rows.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_ADD(const OpCall& call) {
  namespace s = slots::ADD;
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_add", [&] {
    const scalar_t alpha = scalar_t(call.scalars[scalars::ADD::alpha]);
    each_of_three<scalar_t>(*call.tensors[s::out], *call.tensors[s::a], *call.tensors[s::b],
                            [&](scalar_t& o, scalar_t a, scalar_t b) { o = a + alpha * b; });
  });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
