// The tensor cores' products for the recurrent product of the persistent
// kernels and of the cluster kernels (cluster/forward_mma_kernel.cuh,
// cluster/backward_mma_kernel.cuh), where float32 products may round their
// operands: to TF32 (LLTM_MATMUL_PRECISION_HIGH) with mma.sync m16n8k8, or to bfloat16
// (LLTM_MATMUL_PRECISION_MEDIUM, which bfloat16 calls run at) with
// m16n8k16; the sums in float32 either way (fragment layouts: math/mma.cuh).
//
// The kernels read A straight from memory (or from h staged in shared
// memory) into registers, 16 depths at a time: a tile's depth order is free
// as long as A and B agree on it, so lane (g, c) takes the 4 consecutive
// floats from depth 16 p + 4c of its two rows in one 16-byte load. For TF32
// they are two depth tiles, tile 2p's depths c and c + 4 being 4c and 4c + 1
// and tile 2p + 1's 4c + 2 and 4c + 3
// (pair_depth gives B's); for bfloat16 one, its depths 2c, 2c + 1, 2c + 8
// and 2c + 9 being 4c to 4c + 3.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "math/mma.cuh"
#include "sequence/persistent/persistent.h"

namespace lltm::cuda::persistent {

constexpr int kMmaRows = 16;  // an m16n8k8 tile's rows (M)
constexpr int kMmaCols = 8;   // its columns (N)
constexpr int kMmaDepth = 8;  // its depth (K)
constexpr int kPairDepth = 2 * kMmaDepth;

// The pairs of depth tiles that cover a depth of K.
__host__ __device__ constexpr int mma_pairs(int64_t K) { return int((K + kPairDepth - 1) / kPairDepth); }

struct AFragment {
  uint32_t r[4];
};

// A's fragments of depth tiles 2p and 2p + 1; row4(row, k) returns the 4
// floats of A's row `row` from depth k (zeros past A's rows and depth).
template <typename Row4>
__device__ __forceinline__ void load_a_pair(Row4&& row4, int p, int lane, AFragment (&a)[2]) {
  const int g = lane / 4, k = p * kPairDepth + 4 * (lane % 4);
  const float4 lo = row4(g, k), hi = row4(g + 8, k);
  a[0] = {{to_tf32(lo.x), to_tf32(hi.x), to_tf32(lo.y), to_tf32(hi.y)}};
  a[1] = {{to_tf32(lo.z), to_tf32(hi.z), to_tf32(lo.w), to_tf32(hi.w)}};
}

// The depths of B's two registers for lane's column in depth tile 2p + tile.
__device__ __forceinline__ int pair_depth(int p, int tile, int lane) {
  return p * kPairDepth + 4 * (lane % 4) + 2 * tile;
}

// 4 floats of a row of `depth` from `row` + k, through L2 (other blocks
// wrote them before the grid barrier): one 16-byte load where `vector` (row
// on 16 bytes, depth a multiple of 4), else one at a time; zeros past depth.
__device__ __forceinline__ float4 row_floats(const float* row, int k, int depth, bool vector) {
  if (k >= depth) return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (vector) return __ldcg(reinterpret_cast<const float4*>(row + k));
  return make_float4(__ldcg(row + k), k + 1 < depth ? __ldcg(row + k + 1) : 0.0f,
                     k + 2 < depth ? __ldcg(row + k + 2) : 0.0f, k + 3 < depth ? __ldcg(row + k + 3) : 0.0f);
}

// D += A B for a 16 x 8 tile, B's fragment (b0, b1) already in TF32.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const AFragment& a, uint32_t b0, uint32_t b1) {
  cuda::mma_tf32(d, a.r, b0, b1);
}

// A warp's 16 x 8 tile of D into shared memory (rows `ld` apart, ld even): D[g][2c .. 2c + 1] and D[g + 8][2c .. 2c + 1].
__device__ __forceinline__ void store_tile(float* out, int ld, int lane, const float (&d)[4]) {
  const int g = lane / 4, c = lane % 4;
  *reinterpret_cast<float2*>(out + g * ld + 2 * c) = make_float2(d[0], d[1]);
  *reinterpret_cast<float2*>(out + (g + 8) * ld + 2 * c) = make_float2(d[2], d[3]);
}

// The sum over the kWarps partial tiles of element `at` (tiles `tile` floats apart), in warp order.
template <int kTiles>
__device__ __forceinline__ float sum_partials(const float* partial, int at, int tile) {
  float sum = partial[at];
#pragma unroll
  for (int k = 1; k < kTiles; ++k) sum += partial[at + k * tile];
  return sum;
}

__device__ __forceinline__ uint32_t to_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

// D += A B for a 16 x 8 tile over a depth of 16, A and B in bfloat16 pairs.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const AFragment& a, uint32_t b0, uint32_t b1) {
  mma_k16<__nv_bfloat16>(d, a.r, b0, b1);
}

// How the kernels round and multiply, 16 depths (a pair) at a time: A's
// fragments from row4 (as load_a_pair), B's kWords words of one column
// from value(k) (B at depth k, zero past the depth), and D += A B. kMaxState:
// the most states whose W_h slices the kernels keep in registers
// (forward_mma_kernel.cuh), 48 a thread in TF32.
struct Tf32Products {
  static constexpr int kMaxState = 512;
  static constexpr int kWords = 4;
  struct A {
    AFragment tile[2];
  };
  template <typename Row4>
  __device__ static void load_a(Row4&& row4, int p, int lane, A& a) {
    load_a_pair(row4, p, lane, a.tile);
  }
  template <typename Value>
  __device__ static void load_b(Value&& value, int p, int lane, uint32_t (&w)[kWords]) {
#pragma unroll
    for (int tile = 0; tile < 2; ++tile) {
      const int k = pair_depth(p, tile, lane);
      w[2 * tile] = to_tf32(value(k));
      w[2 * tile + 1] = to_tf32(value(k + 1));
    }
  }
  __device__ static void mma(float (&d)[4], const A& a, const uint32_t (&w)[kWords]) {
    mma_tf32(d, a.tile[0], w[0], w[1]);
    mma_tf32(d, a.tile[1], w[2], w[3]);
  }
};

// bfloat16 operands would let the registers hold W_h slices for S up to
// 1024, but past 512 the backward's shares of dh (state_groups x B x S
// floats a step) cost more than the graph path's products (BENCHMARKS.md).
struct Bf16Products {
  static constexpr int kMaxState = 512;
  static constexpr int kWords = 2;
  using A = AFragment;
  template <typename Row4>
  __device__ static void load_a(Row4&& row4, int p, int lane, A& a) {
    const int g = lane / 4, k = p * kPairDepth + 4 * (lane % 4);
    const float4 lo = row4(g, k), hi = row4(g + 8, k);
    a = {{to_bf16x2(lo.x, lo.y), to_bf16x2(hi.x, hi.y), to_bf16x2(lo.z, lo.w), to_bf16x2(hi.z, hi.w)}};
  }
  template <typename Value>
  __device__ static void load_b(Value&& value, int p, int lane, uint32_t (&w)[kWords]) {
    const int k = p * kPairDepth + 4 * (lane % 4);
    w[0] = to_bf16x2(value(k), value(k + 1));
    w[1] = to_bf16x2(value(k + 2), value(k + 3));
  }
  __device__ static void mma(float (&d)[4], const A& a, const uint32_t (&w)[kWords]) { mma_bf16(d, a, w[0], w[1]); }
};

// Calls body(Products{}) with the tensor-core products that `products` names; for exact products, the body's
// result type's zero (false).
template <typename Body>
auto with_products(RecurrentProducts products, Body&& body) -> decltype(body(Tf32Products{})) {
  switch (products) {
    case RecurrentProducts::kTf32:
      return body(Tf32Products{});
    case RecurrentProducts::kBfloat16:
      return body(Bf16Products{});
    default:
      return {};
  }
}

}  // namespace lltm::cuda::persistent
