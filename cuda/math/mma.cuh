// The tensor cores' warp-wide products (mma.sync, sm_80 on) that every
// kernel of the library issues: D += A B for a 16 x 8 tile, float32 sums.
// Fragment layouts as the PTX ISA gives them, with g = lane / 4 and
// c = lane % 4. m16n8k8 .tf32: A's registers hold A[g][c], A[g + 8][c],
// A[g][c + 4] and A[g + 8][c + 4]; B's B[c][g] and B[c + 4][g]. m16n8k16
// .bf16 and .f16, two values a register (the lower depth in the low half):
// A's hold A[g][2c..2c+1], A[g + 8][2c..2c+1], A[g][2c+8..2c+9] and
// A[g + 8][2c+8..2c+9]; B's B[2c..2c+1][g] and B[2c+8..2c+9][g]. D's, for
// all, D[g][2c], D[g][2c + 1], D[g + 8][2c] and D[g + 8][2c + 1]. On an
// older device the products compile to nothing: the callers' plans never
// launch them there.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace lltm::cuda {

// float32 rounded to TF32 (to nearest, ties away), as the tensor cores read it.
__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r = 0;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
#endif
  return r;
}

// D += A B, m16n8k8, A and B already in TF32.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// D += A B, m16n8k16, A and B in pairs of T (bfloat16 or float16).
template <typename T>
__device__ __forceinline__ void mma_k16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    static_assert(std::is_same_v<T, __half>, "m16n8k16 takes bfloat16 or float16");
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
#endif
}

}  // namespace lltm::cuda
