// Sums over a whole strided tensor in two passes (a partial sum per block,
// then one block adding the partials; one block does both for a small
// tensor), in double, in a fixed order: the same inputs give the same bits
// run after run.
#pragma once

#include <algorithm>
#include <cstdint>

#include "lltm_args.h"
#include "math/shape4.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"

namespace lltm::cuda {

// Blocks of the first pass: enough to fill a GPU, few enough for one block to add.
constexpr int64_t kReduceBlocks = 1024;

// The sum and the maximum of v over the warp, in every lane, by a butterfly
// of shuffles: the same order on every run.
template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
template <typename T>
__device__ __forceinline__ T warp_max(T v) {
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The sum of v over the block (kBlockThreads threads), valid in thread 0; one call per kernel.
__device__ __forceinline__ double block_sum(double v) {
  __shared__ double warp_sums[kBlockThreads / 32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kBlockThreads / 32 ? warp_sums[threadIdx.x] : 0.0;
  if (threadIdx.x < 32)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

// The sum of value(i) for i = first, first + step, ... below n, in that
// order. Whole batches of kSumBatch come first, their loads issued before
// any is added: behind a bounds check each, a thread's loads would wait on
// L2 one at a time.
constexpr int kSumBatch = 8;
template <typename Acc = double, typename Value>
__device__ __forceinline__ Acc strided_sum(int64_t first, int64_t n, int64_t step, Value&& value) {
  Acc s = 0;
  int64_t i = first;
  for (; i + (kSumBatch - 1) * step < n; i += kSumBatch * step) {
    Acc v[kSumBatch];
#pragma unroll
    for (int k = 0; k < kSumBatch; ++k) v[k] = value(i + k * step);
#pragma unroll
    for (int k = 0; k < kSumBatch; ++k) s += v[k];
  }
  for (; i < n; i += step) s += value(i);
  return s;
}

// Thread threadIdx.x's share of the sum of x's elements (or their squares), from element `first` in steps of `step`.
template <typename T, bool Square>
__device__ __forceinline__ double thread_sum(const T* x, Shape4 shape, int64_t n, int64_t first, int64_t step) {
  return strided_sum(first, n, step, [&](int64_t i) {
    const double v = double(x[offset_of(i, shape, shape)]);
    return Square ? v * v : v;
  });
}

template <typename T>
__device__ __forceinline__ void store_total(T* total, double scale, double s, bool accumulate) {
  *total = T(accumulate ? double(*total) + scale * s : scale * s);
}

template <typename T, bool Square>
__global__ void partial_sums_kernel(const T* x, Shape4 shape, int64_t n, double* partial) {
  const double s =
      block_sum(thread_sum<T, Square>(x, shape, n, blockIdx.x * int64_t(blockDim.x) + threadIdx.x,
                                      int64_t(gridDim.x) * blockDim.x));
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

template <typename T>
__global__ void finish_sum_kernel(const double* partial, int64_t blocks, T* total, double scale, bool accumulate) {
  double s = strided_sum(threadIdx.x, blocks, blockDim.x, [&](int64_t i) { return partial[i]; });
  s = block_sum(s);
  if (threadIdx.x == 0) store_total(total, scale, s, accumulate);
}

// Both passes in one block, for a tensor of at most kOneBlockElements.
template <typename T, bool Square>
__global__ void one_block_sum_kernel(const T* x, Shape4 shape, int64_t n, T* total, double scale, bool accumulate) {
  const double s = block_sum(thread_sum<T, Square>(x, shape, n, threadIdx.x, blockDim.x));
  if (threadIdx.x == 0) store_total(total, scale, s, accumulate);
}

// Up to this many elements one block sums them in one launch (a loss over a
// batch, a parameter's norm) sooner than a grid and a second launch.
constexpr int64_t kOneBlockElements = 16 * kBlockThreads;

// *total = scale * (the sum of x's elements, or of their squares), or added to *total when accumulating.
template <typename T, bool Square>
void reduce_into(const lltm_tensor& x, T* total, double scale, bool accumulate, cudaStream_t stream) {
  const int64_t n = numel(x);
  if (n <= kOneBlockElements)
    return launch("one_block_sum_kernel", one_block_sum_kernel<T, Square>, dim3(1), dim3(kBlockThreads), 0, stream,
                  static_cast<const T*>(x.data), shape4(x), n, total, scale, accumulate);
  const int64_t blocks = std::min<int64_t>(grid_blocks(n), kReduceBlocks);
  Scratch partial(size_t(blocks) * sizeof(double));
  launch("partial_sums_kernel", partial_sums_kernel<T, Square>, dim3(unsigned(blocks)), dim3(kBlockThreads), 0,
         stream, static_cast<const T*>(x.data), shape4(x), n, partial.as<double>());
  launch("finish_sum_kernel", finish_sum_kernel<T>, dim3(1), dim3(kBlockThreads), 0, stream,
         partial.as<const double>(), blocks, total, scale, accumulate);
}

}  // namespace lltm::cuda
