// FILL's own check: an int32 dst takes only an integer value in int32's range.
// FILL converts: the value is rounded once, to dst's own type, by each
// backend's kernel, so a half-type dst is not staged through float32.
#include <cmath>
#include <string>

#include "op_slots.h"
#include "ops/hooks.h"
#include "status.h"

namespace lltm::ops {

namespace {

void check(Checking& c) {
  const double v = c.call.scalars[scalars::FILL::value];
  if (c.call.tensors[slots::FILL::dst]->dtype == LLTM_INT32 &&
      !(v >= -2147483648.0 && v <= 2147483647.0 && v == std::floor(v)))
    fail(LLTM_ERR_INVALID_ARGUMENT,
         std::string(c.fn) + ": 'value' must be an integer from -2147483648 to 2147483647 when 'dst' is int32, got " +
             std::to_string(v));
}

}  // namespace

LLTM_OP_HOOKS(FILL, check, nullptr, true);

}  // namespace lltm::ops
