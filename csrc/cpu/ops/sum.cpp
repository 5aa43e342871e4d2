// The sum op on the CPU: total = scale * the sum of x's elements, summed in double.
#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../elementwise_rows.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_SUM(const OpCall& call) {
  namespace s = slots::SUM;
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_sum", [&] {
    double sum = 0;
    each_read<scalar_t>(*call.tensors[s::x], [&](scalar_t x) { sum += double(x); });
    *static_cast<scalar_t*>(call.tensors[s::total]->data) = scalar_t(call.scalars[scalars::SUM::scale] * sum);
  });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
