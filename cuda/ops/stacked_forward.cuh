// L LLTM layers stacked, the forward pass (LLTM_OP_STACKED_FORWARD): a sequence forward per layer.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_stacked_forward(const OpCall& call, int device);

}  // namespace lltm::cuda
