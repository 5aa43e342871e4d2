// The LLTM cell on CUDA; throws lltm::Error.
#pragma once

#include <cstdint>

#include "lltm_args.h"

namespace lltm::cuda {

void lltm_forward(const ForwardArgs& args, int32_t dtype, int device);
void lltm_backward(const BackwardArgs& args, int32_t dtype, int device);

}  // namespace lltm::cuda
