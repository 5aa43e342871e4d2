// L LLTM layers stacked, the backward pass (LLTM_OP_STACKED_BACKWARD): a sequence backward per layer.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_stacked_backward(const OpCall& call, int device);

}  // namespace lltm::cuda
