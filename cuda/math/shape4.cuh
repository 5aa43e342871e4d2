// A strided tensor's sizes and strides by value, padded to four dimensions,
// and the offset of its i-th element in row-major order: what the
// element-wise kernels pass to the device.
#pragma once

#include <cstdint>

#include "lltm.h"

namespace lltm::cuda {

struct Shape4 {
  int64_t size[4];
  int64_t stride[4];
};

inline Shape4 shape4(const lltm_tensor& t) {
  Shape4 s{{1, 1, 1, 1}, {0, 0, 0, 0}};
  const int64_t pad = LLTM_MAX_DIMS - t.ndim;
  for (int64_t d = 0; d < t.ndim; ++d) {
    s.size[pad + d] = t.sizes[d];
    s.stride[pad + d] = t.strides[d];
  }
  return s;
}

// The offset in `t` of element i of a tensor with `sizes` (t has those sizes, its own strides).
__device__ __forceinline__ int64_t offset_of(int64_t i, const Shape4& sizes, const Shape4& t) {
  int64_t off = 0;
  for (int d = 3; d >= 0; --d) {
    const int64_t idx = i % sizes.size[d];
    i /= sizes.size[d];
    off += idx * t.stride[d];
  }
  return off;
}

}  // namespace lltm::cuda
