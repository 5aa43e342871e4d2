// The process-wide precision of float32 matrix products
// (lltm_set_float32_matmul_precision), which every call carries to its backend.
#pragma once

#include <cstdint>

namespace lltm::api {

// LLTM_MATMUL_PRECISION_* in force.
int32_t float32_matmul_precision();

}  // namespace lltm::api
