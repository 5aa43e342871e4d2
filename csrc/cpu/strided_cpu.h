// Iteration over strided host tensors of up to LLTM_MAX_DIMS dimensions, row by innermost row.
#pragma once

#include <cstdint>

#include "lltm.h"

namespace lltm::cpu {

// Calls row(a, b, c, n) for every innermost row of `shape` (leading dimensions padded with size 1).
template <typename F>
void for_each_row(const lltm_tensor& shape, F&& row) {
  int64_t sizes[LLTM_MAX_DIMS] = {1, 1, 1, 1};
  const int64_t pad = LLTM_MAX_DIMS - shape.ndim;
  for (int64_t d = 0; d < shape.ndim; ++d) sizes[pad + d] = shape.sizes[d];
  for (int64_t a = 0; a < sizes[0]; ++a)
    for (int64_t b = 0; b < sizes[1]; ++b)
      for (int64_t c = 0; c < sizes[2]; ++c) row(a, b, c, sizes[3]);
}

// Offset (in elements) of the row (a, b, c) of `t`, in for_each_row's padded indexing.
inline int64_t row_offset(const lltm_tensor& t, int64_t a, int64_t b, int64_t c) {
  const int64_t index[3] = {a, b, c};
  const int64_t pad = LLTM_MAX_DIMS - t.ndim;
  int64_t off = 0;
  for (int64_t d = 0; d < t.ndim - 1; ++d) off += index[pad + d] * t.strides[d];
  return off;
}

inline int64_t inner_stride(const lltm_tensor& t) { return t.strides[t.ndim - 1]; }

}  // namespace lltm::cpu
