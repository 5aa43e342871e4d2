// cross_entropy's own check, forward and backward: the reduction says which
// of the two result slots (per row, or one total) the call uses.
#include <string>

#include "op_slots.h"
#include "ops/hooks.h"
#include "status.h"

namespace lltm::ops {

namespace {

template <int Reduction, int PerRow, int Total>
void check(Checking& c) {
  const int64_t reduction = int64_t(c.call.scalars[Reduction]);
  const int wanted = reduction == 0 ? PerRow : Total, unwanted = reduction == 0 ? Total : PerRow;
  const char* said = reduction == 0 ? "0 (none)" : reduction == 1 ? "1 (mean)" : "2 (sum)";
  if (c.call.tensors[wanted] == nullptr)
    fail(LLTM_ERR_NULL_POINTER, std::string(c.fn) + ": '" + c.op.slots[wanted].name + "' is a null pointer; reduction " +
                                    said + " needs it");
  if (c.call.tensors[unwanted] != nullptr)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(c.fn) + ": '" + c.op.slots[unwanted].name + "' is given but reduction " +
                                        said + " uses '" + c.op.slots[wanted].name + "'");
}

}  // namespace

LLTM_OP_HOOKS(CROSS_ENTROPY,
              check<scalars::CROSS_ENTROPY::reduction, slots::CROSS_ENTROPY::losses, slots::CROSS_ENTROPY::total>);
LLTM_OP_HOOKS(CROSS_ENTROPY_BACKWARD,
              check<scalars::CROSS_ENTROPY_BACKWARD::reduction, slots::CROSS_ENTROPY_BACKWARD::grad_losses,
                    slots::CROSS_ENTROPY_BACKWARD::grad_total>);

}  // namespace lltm::ops
