// Host memory: aligned allocation and strided copy and fill.
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#include "../accessor.h"
#include "../dispatch.h"
#include "lltm_cpu.h"
#include "strided_cpu.h"

namespace lltm::cpu {

namespace {

uint64_t physical_memory_bytes() {
  static const uint64_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : UINT64_MAX;
  }();
  return bytes;
}

}  // namespace

void* alloc(uint64_t bytes) {
  // Rounding up below cannot wrap: bytes is at most 2^63 (check_bytes).
  check_bytes(bytes, "lltm_alloc");
  // A machine that overcommits grants any size and kills the process when the
  // pages are touched (a copy of a 2^40-element expanded view), so what can
  // never fit is refused here.
  if (bytes > physical_memory_bytes())
    fail(LLTM_ERR_OUT_OF_MEMORY, "out of host memory allocating " + std::to_string(bytes) +
                                     " bytes: the machine has " + std::to_string(physical_memory_bytes()));
  // 64-byte alignment lets the kernels use aligned vector loads on whole rows.
  const uint64_t rounded = (bytes + 63) / 64 * 64;
  void* p = rounded > SIZE_MAX ? nullptr : std::aligned_alloc(64, size_t(rounded));
  if (p == nullptr) fail(LLTM_ERR_OUT_OF_MEMORY, "out of host memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}

void free(void* data) { std::free(data); }

namespace {

template <typename T>
void copy_typed(const lltm_tensor& dst, const lltm_tensor& src) {
  const int64_t ds = dst.strides[dst.ndim - 1], ss = src.strides[src.ndim - 1];
  for_each_row(dst, [&](int64_t a, int64_t b, int64_t c, int64_t n) {
    T* d = static_cast<T*>(dst.data) + row_offset(dst, a, b, c);
    const T* s = static_cast<const T*>(src.data) + row_offset(src, a, b, c);
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
    T* d = static_cast<T*>(dst.data) + row_offset(dst, a, b, c);
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
