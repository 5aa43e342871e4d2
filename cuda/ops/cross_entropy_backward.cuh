// The cross_entropy_backward op (LLTM_OP_CROSS_ENTROPY_BACKWARD of csrc/lltm_ops.def) on the device, registered with LLTM_CUDA_OP.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_cross_entropy_backward(const OpCall& call, int device);

}  // namespace lltm::cuda
