// Per-row math of the row-wise ops (softmax, cross-entropy), one thread per
// row of a strided [N, V] matrix: the maximum, then the sum of exp(x - max).
#pragma once

#include <cstdint>

namespace lltm::cuda {

template <typename T>
struct RowExp {
  T max;
  T sum;  // of exp(row[v] - max)
};

template <typename T>
__device__ __forceinline__ RowExp<T> row_exp(const T* row, int64_t stride, int64_t V) {
  T max = row[0];
  for (int64_t v = 1; v < V; ++v) max = fmax(max, row[v * stride]);
  T sum = 0;
  for (int64_t v = 0; v < V; ++v) sum += exp(row[v * stride] - max);
  return {max, sum};
}

}  // namespace lltm::cuda
