// The step's gradients (LLTM_OP_BACKWARD): the fused kernels at small sizes, cuBLAS at large ones.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_backward(const OpCall& call, int device);

}  // namespace lltm::cuda
