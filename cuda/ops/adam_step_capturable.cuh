// The adam_step_capturable op (LLTM_OP_ADAM_STEP_CAPTURABLE of csrc/lltm_ops.def) on the device, registered with LLTM_CUDA_OP.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_adam_step_capturable(const OpCall& call, int device);

}  // namespace lltm::cuda
