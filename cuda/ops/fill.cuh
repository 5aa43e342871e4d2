// Every element of a tensor set to one value (LLTM_OP_FILL), in any float dtype.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_fill(const OpCall& call, int device);

}  // namespace lltm::cuda
