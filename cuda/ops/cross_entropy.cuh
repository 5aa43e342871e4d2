// The cross_entropy op (LLTM_OP_CROSS_ENTROPY of csrc/lltm_ops.def) on the device, registered with LLTM_CUDA_OP.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_cross_entropy(const OpCall& call, int device);

}  // namespace lltm::cuda
