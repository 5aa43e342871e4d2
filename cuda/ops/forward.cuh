// One step of the cell (LLTM_OP_FORWARD): the fused kernels at small sizes, cuBLAS at large ones.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_forward(const OpCall& call, int device);

}  // namespace lltm::cuda
