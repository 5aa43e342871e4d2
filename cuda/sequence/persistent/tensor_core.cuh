// The tensor cores' TF32 product, for the persistent kernels' recurrent
// product where float32 products may round their operands to TF32
// (LLTM_MATMUL_PRECISION_HIGH or MEDIUM): mma.sync m16n8k8, one warp's
// 16 x 8 tile of D += A B over a depth of 8, A and B rounded to TF32
// (10-bit mantissas, to nearest), the sums in float32. Fragment layouts as
// the PTX ISA gives them for m16n8k8 .tf32, with g = lane / 4 and
// c = lane % 4: A's registers hold A[g][c], A[g + 8][c], A[g][c + 4] and
// A[g + 8][c + 4]; B's B[c][g] and B[c + 4][g]; D's D[g][2c], D[g][2c + 1],
// D[g + 8][2c] and D[g + 8][2c + 1]. From sm_80 on; the callers' plans never
// launch a kernel holding these on an older device.
#pragma once

#include <cstdint>

namespace lltm::cuda::persistent {

constexpr int kMmaRows = 16;  // an m16n8k8 tile's rows (M)
constexpr int kMmaCols = 8;   // its columns (N)
constexpr int kMmaDepth = 8;  // its depth (K)

// A depth of K padded to whole tiles.
__host__ __device__ constexpr int64_t mma_depth(int64_t K) { return (K + kMmaDepth - 1) / kMmaDepth * kMmaDepth; }

// The stride of a staged row of depth K in shared memory: 4 floats past the
// padded depth, so that the 8 rows an A fragment reads at once start 4 banks
// apart and its 32 lanes meet in no bank.
__host__ __device__ constexpr int64_t mma_row_stride(int64_t K) { return mma_depth(K) + 4; }

__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

// A's fragment of the 16 x 8 tile at `a` (A[0][0] in shared memory, rows `ld` apart), rounded to TF32.
struct AFragment {
  uint32_t r[4];
};

__device__ __forceinline__ AFragment load_a(const float* a, int ld, int lane) {
  const int g = lane / 4, c = lane % 4;
  return {{to_tf32(a[g * ld + c]), to_tf32(a[(g + 8) * ld + c]), to_tf32(a[g * ld + c + 4]),
           to_tf32(a[(g + 8) * ld + c + 4])}};
}

// D += A B for a 16 x 8 tile, B's fragment (b0, b1) already in TF32.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const AFragment& a, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b0), "r"(b1));
}

// A warp's 16 x 8 tile of D into shared memory (rows `ld` apart, ld even): D[g][2c .. 2c + 1] and D[g + 8][2c .. 2c + 1].
__device__ __forceinline__ void store_tile(float* out, int ld, int lane, const float (&d)[4]) {
  const int g = lane / 4, c = lane % 4;
  *reinterpret_cast<float2*>(out + g * ld + 2 * c) = make_float2(d[0], d[1]);
  *reinterpret_cast<float2*>(out + (g + 8) * ld + 2 * c) = make_float2(d[2], d[3]);
}

}  // namespace lltm::cuda::persistent
