// One torch.optim.Adam step (LLTM_OP_ADAM_STEP), in place.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_adam_step(const OpCall& call, int device);

}  // namespace lltm::cuda
