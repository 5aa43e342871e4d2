// One call of one op, as lltm_run and every typed entry point make it:
// validated by the op's declaration, then run on the CPU or the device
// backend, with tensors of other float types staged through the compute type.
#pragma once

#include "lltm.h"
#include "ops/schema.h"

namespace lltm::api {

// Throws lltm::Error with a message naming `fn`; `typed` for a typed entry
// point of ABI 1 or 2, whose own arguments the messages then name.
void run_op(const char* fn, const ops::OpSchema& op, const lltm_call& call, bool typed = false);

}  // namespace lltm::api
