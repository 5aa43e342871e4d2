// The persistent kernels' shared memory: the weights' slice, padded, and
// the rows each step stages beside it. Each step first copies what it reads
// (h_{t-1} or dG_t from other blocks, and in the forward pass the block's
// input sums and cells) into shared memory, as many batch rows at a time as
// the shared memory left beside the weights holds: the whole block then has
// many loads in flight at once, instead of each warp waiting on L2 once per
// few products.
#pragma once

#include <cuda_pipeline_primitives.h>

#include <cstdint>
#include <type_traits>

#include "sequence/persistent/work_split.cuh"

namespace lltm::cuda::persistent {

// The weights' slice in shared memory, rounded up to 16 bytes so that the
// staged rows after it take 16-byte copies.
template <typename T>
__host__ __device__ constexpr int64_t padded(int64_t elements) {
  constexpr int64_t per16 = 16 / int64_t(sizeof(T));
  return (elements + per16 - 1) / per16 * per16;
}

// N consecutive T of shared memory into registers, 16 bytes at a time (row is 16-byte aligned).
template <int N, typename T>
__device__ __forceinline__ void load_row(const T* row, T (&out)[N]) {
  if constexpr (std::is_same_v<T, float> && N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N / 4; ++i) {
      const float4 v = reinterpret_cast<const float4*>(row)[i];
      out[4 * i] = v.x;
      out[4 * i + 1] = v.y;
      out[4 * i + 2] = v.z;
      out[4 * i + 3] = v.w;
    }
  } else if constexpr (std::is_same_v<T, double> && N % 2 == 0) {
#pragma unroll
    for (int i = 0; i < N / 2; ++i) {
      const double2 v = reinterpret_cast<const double2*>(row)[i];
      out[2 * i] = v.x;
      out[2 * i + 1] = v.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = row[i];
  }
}

// Starts copying `count` consecutive elements that other blocks wrote before
// the grid barrier into shared memory, through L2 (never a stale L1 line):
// 16-byte asynchronous copies (cp.async.cg) where the source allows, all in
// flight at once without holding registers, else plain ld.cg loads. The
// caller waits with stage_wait() and then publishes them with __syncthreads().
template <typename T>
__device__ __forceinline__ void stage(T* dst, const T* src, int64_t count) {
  if ((count * int64_t(sizeof(T))) % 16 == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0) {
    const uint4* from = reinterpret_cast<const uint4*>(src);
    uint4* to = reinterpret_cast<uint4*>(dst);
    const int n = int(count * int64_t(sizeof(T)) / 16);
    for (int e = threadIdx.x; e < n; e += kThreads) __pipeline_memcpy_async(to + e, from + e, 16);
    __pipeline_commit();
  } else {
#pragma unroll 4
    for (int e = threadIdx.x; e < count; e += kThreads) dst[e] = __ldcg(src + e);
  }
}

__device__ __forceinline__ void stage_wait() { __pipeline_wait_prior(0); }

}  // namespace lltm::cuda::persistent
