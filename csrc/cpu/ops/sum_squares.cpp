// The sum_squares op on the CPU: total (+)= the sum of x's squares, summed in double.
#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../elementwise_rows.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_SUM_SQUARES(const OpCall& call) {
  namespace s = slots::SUM_SQUARES;
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_sum_squares", [&] {
    double sum = 0;
    each_read<scalar_t>(*call.tensors[s::x], [&](scalar_t x) { sum += double(x) * double(x); });
    scalar_t& total = *static_cast<scalar_t*>(call.tensors[s::total]->data);
    total = scalar_t((call.flags & LLTM_ACCUMULATE_PARAM_GRADS) != 0 ? double(total) + sum : sum);
  });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
