// Outputs that share memory with an input or another output are refused:
// a kernel would read what it has already overwritten, or two outputs
// would race. Judged by the byte range each descriptor spans, which is
// cheap and exact for the dense views the library is fed; two interleaved
// views of one buffer (every other column each) count as overlapping.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lltm.h"

namespace lltm {

struct Named {
  const lltm_tensor* t;  // validated by check_tensor
  const char* name;
};

// Throws LLTM_ERR_INVALID_ARGUMENT naming `fn` and both arguments when an
// output's span meets an input's or another output's.
void check_no_overlap(const char* fn, int64_t element_size, const Named* outputs, size_t n_outputs,
                      const Named* inputs, size_t n_inputs);

template <size_t O, size_t I>
void check_no_overlap(const char* fn, int64_t element_size, const Named (&outputs)[O], const Named (&inputs)[I]) {
  check_no_overlap(fn, element_size, outputs, O, inputs, I);
}

// Whether a and b are the same view (same first element, sizes and strides):
// an element-wise operation may then read and write it in place.
bool same_view(const lltm_tensor& a, const lltm_tensor& b);

}  // namespace lltm
