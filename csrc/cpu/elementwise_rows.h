// Element-wise loops over strided tensors of equal sizes (the first one's
// rows, from strided_cpu.h), for the ops of csrc/cpu/ops/.
#pragma once

#include "strided_cpu.h"

namespace lltm::cpu {

// f(out[i], a[i]) over every element.
template <typename T, typename F>
void each_of_two(const lltm_tensor& out, const lltm_tensor& a, F&& f) {
  const int64_t os = inner_stride(out), as = inner_stride(a);
  for_each_row(out, [&](int64_t i, int64_t j, int64_t k, int64_t n) {
    T* o = static_cast<T*>(out.data) + row_offset(out, i, j, k);
    const T* x = static_cast<const T*>(a.data) + row_offset(a, i, j, k);
    for (int64_t e = 0; e < n; ++e) f(o[e * os], x[e * as]);
  });
}

// f(out[i], a[i], b[i]) over every element.
template <typename T, typename F>
void each_of_three(const lltm_tensor& out, const lltm_tensor& a, const lltm_tensor& b, F&& f) {
  const int64_t os = inner_stride(out), as = inner_stride(a), bs = inner_stride(b);
  for_each_row(out, [&](int64_t i, int64_t j, int64_t k, int64_t n) {
    T* o = static_cast<T*>(out.data) + row_offset(out, i, j, k);
    const T* x = static_cast<const T*>(a.data) + row_offset(a, i, j, k);
    const T* y = static_cast<const T*>(b.data) + row_offset(b, i, j, k);
    for (int64_t e = 0; e < n; ++e) f(o[e * os], x[e * as], y[e * bs]);
  });
}

// f(a[i]) over every element, read only.
template <typename T, typename F>
void each_read(const lltm_tensor& a, F&& f) {
  const int64_t as = inner_stride(a);
  for_each_row(a, [&](int64_t i, int64_t j, int64_t k, int64_t n) {
    const T* x = static_cast<const T*>(a.data) + row_offset(a, i, j, k);
    for (int64_t e = 0; e < n; ++e) f(x[e * as]);
  });
}

}  // namespace lltm::cpu
