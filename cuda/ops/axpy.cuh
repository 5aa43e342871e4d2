// y += alpha * x (LLTM_OP_AXPY), any strides.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_axpy(const OpCall& call, int device);

}  // namespace lltm::cuda
