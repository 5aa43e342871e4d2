// Gradient accumulation and optimizer steps on the device; they throw lltm::Error.
#pragma once

#include "lltm_args.h"

namespace lltm::cuda {

void axpy(const lltm_tensor& y, double alpha, const lltm_tensor& x, int32_t dtype, int device);
void sgd_step(const SgdArgs& args, int32_t dtype, int device);
void adam_step(const AdamArgs& args, int32_t dtype, int device);

}  // namespace lltm::cuda
