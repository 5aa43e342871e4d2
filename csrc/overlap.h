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

// The bytes [begin, end) a tensor spans, from the offset of its last
// element as check_tensor returns it (which also makes sure end does not wrap).
struct Span {
  uintptr_t begin, end;
};

inline Span span_of(const lltm_tensor& t, int64_t last, int64_t element_size) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(t.data);
  return {begin, begin + uintptr_t(last + 1) * uintptr_t(element_size)};
}

// Whether two spans share a byte.
inline bool meet(const Span& a, const Span& b) { return a.begin < b.end && b.begin < a.end; }

// Throws LLTM_ERR_INVALID_ARGUMENT naming `fn`, the first output found
// overlapping an input or another output, and that argument.
[[noreturn]] void refuse_overlap(const char* fn, const Named* outputs, const Span* out, size_t n_outputs,
                                 const Named* inputs, const Span* in, size_t n_inputs);

// Whether any of the first n_outputs spans meets another of the n (every
// pair but two of the inputs that follow the outputs).
bool any_overlap(const Span* spans, size_t n_outputs, size_t n);

// Refuses an output whose span meets an input's or another output's.
template <size_t O, size_t I>
void check_no_overlap(const char* fn, const Named (&outputs)[O], const Span (&out)[O], const Named (&inputs)[I],
                      const Span (&in)[I]) {
  Span spans[O + I];
  for (size_t o = 0; o < O; ++o) spans[o] = out[o];
  for (size_t i = 0; i < I; ++i) spans[O + i] = in[i];
  if (any_overlap(spans, O, O + I)) refuse_overlap(fn, outputs, out, O, inputs, in, I);
}

// Whether a and b are the same view (same first element, sizes and strides):
// an element-wise operation may then read and write it in place.
bool same_view(const lltm_tensor& a, const lltm_tensor& b);

}  // namespace lltm
