// Refusals of values that only the kernels read (an index outside its
// range, a sampling weight that is no probability), worded once for every
// backend.
#pragma once

#include <cstdint>
#include <string>

#include "status.h"

namespace lltm::ops {

[[noreturn]] inline void refuse_index(const char* fn, const char* name, int64_t position, int64_t value,
                                      int64_t bound, const char* also = "") {
  fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": '" + name + "' holds " + std::to_string(value) + " at [" +
                                      std::to_string(position) + "]; expected an index from 0 to " +
                                      std::to_string(bound - 1) + also);
}

// A sequence's per-sample length outside [1, steps].
[[noreturn]] inline void refuse_length(const char* fn, int64_t position, int64_t value, int64_t steps) {
  fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": 'lengths' holds " + std::to_string(value) + " at [" +
                                      std::to_string(position) + "]; expected a length from 1 to T = " +
                                      std::to_string(steps));
}

// Row `row` of a sampling op's weights: one is negative, infinite or NaN (`bad`), or none is positive.
[[noreturn]] inline void refuse_weights(const char* fn, const char* name, int64_t row, bool bad) {
  fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": '" + name + "' row " + std::to_string(row) +
                                      (bad ? " has a negative, infinite or NaN weight"
                                           : " has no positive weight; expected non-negative weights, not all 0"));
}

}  // namespace lltm::ops
