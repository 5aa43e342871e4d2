// Host memory: aligned allocation and strided copy and fill.
#include <cstdlib>
#include <cstring>
#include <string>

#include "../accessor.h"
#include "../dispatch.h"
#include "lltm_cpu.h"

namespace lltm::cpu {

void* alloc(uint64_t bytes) {
  // 64-byte alignment lets the kernels use aligned vector loads on whole rows.
  const uint64_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr)
    fail(LLTM_ERR_OUT_OF_MEMORY, "lltm_alloc: out of host memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}

void free(void* data) { std::free(data); }

namespace {

// Visits every element of a rank-4 view (trailing dimensions padded with size 1).
template <typename F>
void for_each_row(const lltm_tensor& shape, F&& row) {
  int64_t sizes[LLTM_MAX_DIMS] = {1, 1, 1, 1};
  const int64_t pad = LLTM_MAX_DIMS - shape.ndim;
  for (int64_t d = 0; d < shape.ndim; ++d) sizes[pad + d] = shape.sizes[d];
  for (int64_t a = 0; a < sizes[0]; ++a)
    for (int64_t b = 0; b < sizes[1]; ++b)
      for (int64_t c = 0; c < sizes[2]; ++c) row(a, b, c, sizes[3]);
}

int64_t offset(const lltm_tensor& t, int64_t a, int64_t b, int64_t c) {
  const int64_t index[3] = {a, b, c};
  const int64_t pad = LLTM_MAX_DIMS - t.ndim;
  int64_t off = 0;
  for (int64_t d = 0; d < t.ndim - 1; ++d) off += index[pad + d] * t.strides[d];
  return off;
}

template <typename T>
void copy_typed(const lltm_tensor& dst, const lltm_tensor& src) {
  const int64_t ds = dst.strides[dst.ndim - 1], ss = src.strides[src.ndim - 1];
  for_each_row(dst, [&](int64_t a, int64_t b, int64_t c, int64_t n) {
    T* d = static_cast<T*>(dst.data) + offset(dst, a, b, c);
    const T* s = static_cast<const T*>(src.data) + offset(src, a, b, c);
    if (ds == 1 && ss == 1)
      std::memcpy(d, s, size_t(n) * sizeof(T));
    else
      for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
  });
}

template <typename T>
void fill_typed(const lltm_tensor& dst, T value) {
  const int64_t ds = dst.strides[dst.ndim - 1];
  for_each_row(dst, [&](int64_t a, int64_t b, int64_t c, int64_t n) {
    T* d = static_cast<T*>(dst.data) + offset(dst, a, b, c);
    for (int64_t i = 0; i < n; ++i) d[i * ds] = value;
  });
}

}  // namespace

void copy(const lltm_tensor& dst, const lltm_tensor& src, int32_t dtype) {
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_copy", [&] { copy_typed<scalar_t>(dst, src); });
}

void fill(const lltm_tensor& dst, double value, int32_t dtype) {
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_fill", [&] { fill_typed<scalar_t>(dst, scalar_t(value)); });
}

}  // namespace lltm::cpu
