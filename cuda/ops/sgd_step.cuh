// One torch.optim.SGD step (LLTM_OP_SGD_STEP), in place.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_sgd_step(const OpCall& call, int device);

}  // namespace lltm::cuda
