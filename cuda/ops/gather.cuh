// The gather op (LLTM_OP_GATHER of csrc/lltm_ops.def) on the device, registered with LLTM_CUDA_OP.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_gather(const OpCall& call, int device);

}  // namespace lltm::cuda
