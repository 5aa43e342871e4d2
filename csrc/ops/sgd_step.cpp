// SGD's own check: with momentum the buffer is required.
#include <string>

#include "op_slots.h"
#include "ops/hooks.h"
#include "status.h"

namespace lltm::ops {

namespace {

void check(Checking& c) {
  if (c.call.scalars[scalars::SGD_STEP::momentum] != 0.0 && c.call.tensors[slots::SGD_STEP::momentum_buffer] == nullptr)
    fail(LLTM_ERR_NULL_POINTER, std::string(c.fn) + ": 'momentum_buffer' is a null pointer");
}

}  // namespace

LLTM_OP_HOOKS(SGD_STEP, check);

}  // namespace lltm::ops
