// The row-wise ops (softmax, argmax, cross-entropy), one warp per row of a
// strided [N, V] matrix: the lanes take the row's elements lane, lane + 32,
// ... (so that a dense row's loads are coalesced), and butterfly shuffles
// combine them, in the same order on every run. Their launch, the warp's
// row loop, and the per-row math (the maximum, then the sum of exp(x - max)).
#pragma once

#include <cstdint>
#include <utility>

#include "math/reduce.cuh"
#include "runtime/launch.h"

namespace lltm::cuda {

constexpr int kRowLanes = 32;  // a warp: reduce.cuh's warp_sum and warp_max
constexpr int kRowsPerBlock = kBlockThreads / kRowLanes;

// This thread's lane in its row's warp, its warp's first row and the stride between a warp's rows.
__device__ __forceinline__ int row_lane() { return int(threadIdx.x) % kRowLanes; }
__device__ __forceinline__ int64_t first_row() {
  return int64_t(blockIdx.x) * kRowsPerBlock + int64_t(threadIdx.x) / kRowLanes;
}
__device__ __forceinline__ int64_t row_step() { return int64_t(gridDim.x) * kRowsPerBlock; }

template <typename T>
struct RowExp {
  T max;
  T sum;  // of exp(row[v] - max)
};

// The row's maximum and sum of exp(x - max), in every lane of its warp.
template <typename T>
__device__ __forceinline__ RowExp<T> row_exp(const T* row, int64_t stride, int64_t V) {
  const int lane = row_lane();
  T max = -INFINITY;
  for (int64_t v = lane; v < V; v += kRowLanes) max = fmax(max, row[v * stride]);
  max = warp_max(max);
  T sum = 0;
  for (int64_t v = lane; v < V; v += kRowLanes) sum += exp(row[v * stride] - max);
  return {max, warp_sum(sum)};
}

// The blocks of a row-wise launch over `rows` rows (for a kernel that leaves something per block).
inline unsigned row_blocks(int64_t rows) { return grid_blocks(rows * kRowLanes); }

// Launches a row-wise kernel over `rows` rows, a warp each, on `stream`.
template <typename... Params, typename... Args>
void launch_rows(const char* name, void (*kernel)(Params...), int64_t rows, cudaStream_t stream, Args&&... args) {
  launch(name, kernel, dim3(row_blocks(rows)), dim3(kBlockThreads), 0, stream, std::forward<Args>(args)...);
}

}  // namespace lltm::cuda
