// A strided tensor's sizes and strides by value, padded to four dimensions,
// and the offset of its i-th element in row-major order: what the
// element-wise kernels pass to the device. Also a matrix element's row and
// column: the per-element index arithmetic of the kernels, kept in 32 bits
// where the sizes allow; and a 3-D view's strides for the ops along one dimension.
#pragma once

#include <cstdint>

#include "lltm.h"
#include "lltm_args.h"

namespace lltm::cuda {

// A 3-D view's strides by value: the [O, P, I] tensors of the ops that
// work along one dimension (cat, gather and its backward), the others flattened around it.
struct Strides3 {
  int64_t s0, s1, s2;
};

inline Strides3 strides3(const lltm_tensor& t) { return {t.strides[0], t.strides[1], t.strides[2]}; }

struct Shape4 {
  int64_t size[4];
  int64_t stride[4];
  // Row-major contiguous: element i is at offset i, with no index arithmetic.
  bool dense;
  // Fewer than 2^32 elements: the index arithmetic in 32 bits (a 64-bit
  // division is many times the instructions of a 32-bit one on the GPU).
  bool narrow;
};

inline Shape4 shape4(const lltm_tensor& t) {
  Shape4 s{{1, 1, 1, 1}, {0, 0, 0, 0}, is_contiguous(t), numel(t) <= int64_t(UINT32_MAX)};
  const int64_t pad = LLTM_MAX_DIMS - t.ndim;
  for (int64_t d = 0; d < t.ndim; ++d) {
    s.size[pad + d] = t.sizes[d];
    s.stride[pad + d] = t.strides[d];
  }
  return s;
}

// The offset in `t` of element i of a tensor with `sizes`: t has those
// sizes (its own strides), so where t is dense the offset is i itself.
__device__ __forceinline__ int64_t offset_of(int64_t i, const Shape4& sizes, const Shape4& t) {
  if (t.dense) return i;
  int64_t off = 0;
  if (sizes.narrow) {
    uint32_t j = uint32_t(i);
    for (int d = 3; d >= 0; --d) {
      const uint32_t n = uint32_t(sizes.size[d]);
      off += int64_t(j % n) * t.stride[d];
      j /= n;
    }
    return off;
  }
  for (int d = 3; d >= 0; --d) {
    const int64_t idx = i % sizes.size[d];
    i /= sizes.size[d];
    off += idx * t.stride[d];
  }
  return off;
}

// Row and column of element e of a row-major matrix of `n` elements and
// `cols` columns, in 32-bit arithmetic where n allows it (as offset_of).
struct RowCol {
  int64_t row;
  int col;
};

__device__ __forceinline__ RowCol row_col(int64_t e, int64_t n, int cols) {
  if (n <= int64_t(UINT32_MAX)) {
    const uint32_t row = uint32_t(e) / uint32_t(cols);
    return {int64_t(row), int(uint32_t(e) - row * uint32_t(cols))};
  }
  return {e / cols, int(e % cols)};
}

}  // namespace lltm::cuda
