// The row-wise ops (softmax, argmax, cross-entropy), one thread per row of
// a strided [N, V] matrix: their launch, and their per-row math (the
// maximum, then the sum of exp(x - max)).
#pragma once

#include <cstdint>
#include <utility>

#include "runtime/launch.h"

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

// Launches a row-wise kernel over `rows` rows, a thread each, on `stream`.
template <typename... Params, typename... Args>
void launch_rows(const char* name, void (*kernel)(Params...), int64_t rows, cudaStream_t stream, Args&&... args) {
  launch(name, kernel, dim3(grid_blocks(rows)), dim3(kBlockThreads), 0, stream, std::forward<Args>(args)...);
}

}  // namespace lltm::cuda
