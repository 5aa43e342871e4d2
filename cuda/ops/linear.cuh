// y = x Wᵀ + bias (LLTM_OP_LINEAR), bias optional, any strides.
#pragma once

#include "op_call.h"

namespace lltm::cuda {

// Throws lltm::Error.
void op_linear(const OpCall& call, int device);

}  // namespace lltm::cuda
