// Out-of-place transposition of a small matrix, a square block of vector
// lanes at a time in registers: the forward pass's GEMM produces the gates
// transposed (units by batch), and scattering them element by element into
// the batch-major gates cost as much as the GEMM itself at 16x32x128.
#pragma once

#include <cstdint>
#include <utility>

#include "gemm.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace transpose_detail {

// One butterfly stage of an L x L transposition: rows i and i + H swap the
// H x H blocks off their diagonal. After the stages H = L/2, ..., 1 row v
// holds column v.
template <typename V, int L, int H, size_t... J>
inline void swap_blocks(V& a, V& b, std::index_sequence<J...>) {
  const V lo = __builtin_shufflevector(a, b, ((J & H) ? L + J - H : J)...);
  const V hi = __builtin_shufflevector(a, b, ((J & H) ? L + J : J + H)...);
  a = lo;
  b = hi;
}

template <typename V, int L, int H>
inline void stages(V* r) {
  if constexpr (H >= 1) {
#pragma GCC unroll 16
    for (int i = 0; i < L; ++i)
      if ((i & H) == 0) swap_blocks<V, L, H>(r[i], r[i + H], std::make_index_sequence<L>{});
    stages<V, L, H / 2>(r);
  }
}

}  // namespace transpose_detail

// dst[c * ldd + r * dcs] = src[r * lds + c * scs] for r < rows, c < cols:
// full L x L blocks go through registers when scs == dcs == 1, the rest one
// element at a time.
template <typename T>
void transpose(const T* src, int64_t lds, int64_t scs, int64_t rows, int64_t cols, T* dst, int64_t ldd,
               int64_t dcs) {
  using V = typename Vector<T>::type;
  constexpr int L = Vector<T>::lanes;
  const bool blocks = scs == 1 && dcs == 1;
  const int64_t full_rows = blocks ? rows / L * L : 0, full_cols = cols / L * L;
  for (int64_t r0 = 0; r0 < full_rows; r0 += L)
    for (int64_t c0 = 0; c0 < full_cols; c0 += L) {
      V block[L];
#pragma GCC unroll 16
      for (int i = 0; i < L; ++i) std::memcpy(&block[i], src + (r0 + i) * lds + c0, sizeof(V));
      transpose_detail::stages<V, L, L / 2>(block);
#pragma GCC unroll 16
      for (int i = 0; i < L; ++i) std::memcpy(dst + (c0 + i) * ldd + r0, &block[i], sizeof(V));
    }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = r < full_rows ? full_cols : 0; c < cols; ++c) dst[c * ldd + r * dcs] = src[r * lds + c * scs];
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
