// The reverse_steps op (LLTM_OP_REVERSE_STEPS of csrc/lltm_ops.def) on the device, registered with LLTM_CUDA_OP.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_reverse_steps(const OpCall& call, int device);

}  // namespace lltm::cuda
