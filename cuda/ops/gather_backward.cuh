// The gather_backward op (LLTM_OP_GATHER_BACKWARD of csrc/lltm_ops.def) on the device, registered with LLTM_CUDA_OP.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_gather_backward(const OpCall& call, int device);

}  // namespace lltm::cuda
