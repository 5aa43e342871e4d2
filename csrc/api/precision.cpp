#include "api/precision.h"

#include <atomic>
#include <string>

#include "lltm.h"
#include "status.h"

namespace lltm::api {

namespace {

std::atomic<int32_t> precision{LLTM_MATMUL_PRECISION_HIGHEST};

}  // namespace

int32_t float32_matmul_precision() { return precision.load(std::memory_order_relaxed); }

}  // namespace lltm::api

using namespace lltm;

extern "C" {

LLTM_API int32_t lltm_set_float32_matmul_precision(int32_t value) {
  return guard([&] {
    if (value != LLTM_MATMUL_PRECISION_HIGHEST && value != LLTM_MATMUL_PRECISION_HIGH &&
        value != LLTM_MATMUL_PRECISION_MEDIUM)
      fail(LLTM_ERR_INVALID_ARGUMENT, "lltm_set_float32_matmul_precision: 'precision' must be " +
                                          std::to_string(LLTM_MATMUL_PRECISION_HIGHEST) + " (highest), " +
                                          std::to_string(LLTM_MATMUL_PRECISION_HIGH) + " (high) or " +
                                          std::to_string(LLTM_MATMUL_PRECISION_MEDIUM) + " (medium), got " +
                                          std::to_string(value));
    api::precision.store(value, std::memory_order_relaxed);
  });
}

LLTM_API int32_t lltm_float32_matmul_precision(void) { return api::float32_matmul_precision(); }

}  // extern "C"
