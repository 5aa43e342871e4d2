// Refusals of values that only the kernels read (an index outside its
// range, a sampling weight that is no probability), worded once for every
// backend, and the rule an index is judged by, shared by the CPU's check
// and the CUDA backend's device-side one.
#pragma once

#include <cstdint>
#include <string>

#include "lltm.h"
#include "status.h"

#if defined(__CUDACC__)
#define LLTM_INDEX_RULE __host__ __device__
#else
#define LLTM_INDEX_RULE
#endif

namespace lltm::ops {

// What an op that reads indices (embedding's ids, cross_entropy's targets) accepts.
struct IndexRule {
  int64_t bound;       // an index is in [0, bound)
  bool has_ignore;     // ... or equals `ignore` (cross_entropy's ignore_index)
  int64_t ignore;

  LLTM_INDEX_RULE bool refuses(int64_t v) const { return (v < 0 || v >= bound) && !(has_ignore && v == ignore); }
};

[[noreturn]] inline void refuse_index(const char* fn, const char* name, int64_t position, int64_t value,
                                      const IndexRule& rule) {
  fail(LLTM_ERR_INVALID_ARGUMENT,
       std::string(fn) + ": '" + name + "' holds " + std::to_string(value) + " at [" + std::to_string(position) +
           "]; expected an index from 0 to " + std::to_string(rule.bound - 1) +
           (rule.has_ignore ? " or ignore_index (" + std::to_string(rule.ignore) + ")" : std::string()));
}

// Refuses the first of `ids`' n values (int32, 1-D, any stride, in host
// memory) that `rule` refuses, naming it as argument `name` of `fn`.
inline void check_indices(const char* fn, const char* name, const lltm_tensor& ids, int64_t n, const IndexRule& rule) {
  const int32_t* id = static_cast<const int32_t*>(ids.data);
  for (int64_t i = 0; i < n; ++i)
    if (rule.refuses(id[i * ids.strides[0]])) refuse_index(fn, name, i, id[i * ids.strides[0]], rule);
}

// A contiguous index tensor of n values as the 1-D tensor check_indices reads.
inline lltm_tensor flat_indices(const lltm_tensor& contiguous, int64_t n) {
  lltm_tensor flat = contiguous;
  flat.ndim = 1;
  flat.sizes[0] = n;
  flat.strides[0] = 1;
  return flat;
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
