// Backpropagation through time (LLTM_OP_SEQUENCE_BACKWARD), by the sequence engine.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_sequence_backward(const OpCall& call, int device);

}  // namespace lltm::cuda
