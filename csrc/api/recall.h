// The last accepted calls of this thread, each by everything validation
// reads but the tensors' addresses: a call that repeats one (the next step of
// a loop, with new outputs) skips the checks of ranks, shapes, strides,
// dtypes and scalars, whose outcome it would repeat, and keeps those that
// read addresses (null, the end of the address space, overlap).
#pragma once

#include "ops/hooks.h"

namespace lltm::api {

// Whether c.given repeats a remembered call of its op; if so c.call,
// c.spans, c.converted and c.overlap are as the full checks would have left
// them before the overlap check, which the caller then runs. False where it
// does not, or where a tensor's address is null or its elements would pass
// the end of the address space: the full checks then run (and word any
// refusal), rewriting whatever this left.
bool recall(ops::Checking& c);

// Remembers a call that passed every check up to the overlap check, unless
// its op has checks of its own (ops/hooks.h), which may read anything.
void remember(const ops::Checking& c);

}  // namespace lltm::api
