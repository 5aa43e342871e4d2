// The scale_by_norm op (LLTM_OP_SCALE_BY_NORM of csrc/lltm_ops.def) on the device, registered with LLTM_CUDA_OP.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_scale_by_norm(const OpCall& call, int device);

}  // namespace lltm::cuda
