// Validation of one call by its op's declaration (ops/schema.h): the same
// code for every op, whose messages start with `fn` and name the slots.
#pragma once

#include "lltm.h"
#include "ops/hooks.h"

namespace lltm::api {

// Checks `given` for op `op` in this order: given bits and flags, every
// present tensor (check_tensor), dtypes, the ranks of the slots the sizes
// come from, the sizes, every slot's shape, the scalars, the op's own checks,
// overlap. Fills c.call (c.call.op and the rest) and c.spans.
void validate(ops::Checking& c);

// The given bits and the sizes alone (lltm_buffer_bytes): the slots the
// sizes come from are checked as tensors, for their dtype and rank.
void bind_sizes(ops::Checking& c);

}  // namespace lltm::api
