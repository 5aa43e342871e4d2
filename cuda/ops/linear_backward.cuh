// linear's gradients (LLTM_OP_LINEAR_BACKWARD): d_x, d_weight and d_bias, each optional.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_linear_backward(const OpCall& call, int device);

}  // namespace lltm::cuda
