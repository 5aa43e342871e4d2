// T steps of the cell in one call (LLTM_OP_SEQUENCE_FORWARD), by the sequence engine.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_sequence_forward(const OpCall& call, int device);

}  // namespace lltm::cuda
