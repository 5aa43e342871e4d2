// A lane group's arithmetic on staged rows: 16-byte vectors of them, their
// dot products, and the group's sum.
#pragma once

#include <cstdint>

#include "sequence/cluster/work_split.cuh"

namespace lltm::cuda::cluster {

// Staged rows are read 16 bytes at a time; their length is padded with zeros.
template <typename T>
struct Vector16;
template <>
struct Vector16<float> {
  using type = float4;
};
template <>
struct Vector16<double> {
  using type = double2;
};

template <typename T>
constexpr int kPerVector = int(16 / sizeof(T));

template <typename T>
constexpr int64_t padded_width(int64_t n) {
  return (n + kPerVector<T> - 1) / kPerVector<T> * kPerVector<T>;
}

__device__ __forceinline__ void dot_add(float& acc, float4 a, float4 b) {
  acc += a.x * b.x;
  acc += a.y * b.y;
  acc += a.z * b.z;
  acc += a.w * b.w;
}

__device__ __forceinline__ void dot_add(double& acc, double2 a, double2 b) {
  acc += a.x * b.x;
  acc += a.y * b.y;
}

__device__ __forceinline__ void fma_lanes(float4& acc, float4 a, float4 b) {
  acc.x += a.x * b.x;
  acc.y += a.y * b.y;
  acc.z += a.z * b.z;
  acc.w += a.w * b.w;
}

__device__ __forceinline__ void fma_lanes(double2& acc, double2 a, double2 b) {
  acc.x += a.x * b.x;
  acc.y += a.y * b.y;
}

__device__ __forceinline__ float lanes_sum(float4 a) { return (a.x + a.y) + (a.z + a.w); }
__device__ __forceinline__ double lanes_sum(double2 a) { return a.x + a.y; }

// The group's sum, in every lane of it (a + b and b + a round alike, so the
// lanes agree to the bit). The whole warp takes the shuffles (a partial
// mask costs a divergence check each time).
template <typename T>
__device__ __forceinline__ T group_sum(T v) {
#pragma unroll
  for (int offset = kGroup / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

}  // namespace lltm::cuda::cluster
