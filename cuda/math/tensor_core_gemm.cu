// The own tensor-core product (tensor_core_gemm.h): a block of 8 warps
// computes a kTile x kTile tile of C with mma.sync m16n8k16 (float32 sums),
// each warp a 64 x 32 part of it, over kDepth-deep slabs of A and B staged in
// shared memory with the depth contiguous (A by rows, B by columns). A
// thread loads its share of the next slab into registers while the block
// multiplies the staged one. Each operand is read 8 elements at a time
// along whichever dimension is contiguous in memory (the depth, or the
// rows / columns, stored transposed), element by element otherwise and at
// the edges, so any strides work and the common layouts load at full width.
// Where each operand is read 16 bytes at a time (along the depth or the side)
// in chunks that never cross its edges, a second kernel copies the slabs
// asynchronously (tensor_core_gemm_async_kernel, below), over this tile or,
// for products that fill the device twice over, a 128 x 256 one.
#include <atomic>
#include <cstdint>

#include "math/async_copy.cuh"
#include "math/dtype.cuh"
#include "math/mma.cuh"
#include "math/tensor_core_gemm.h"
#include "runtime/launch.h"

namespace lltm::cuda {

namespace {

constexpr int kTile = 128;
constexpr int kDepth = 32;
constexpr int kThreads = 256;
constexpr int kWarpRows = 64, kWarpCols = 32;  // a warp's part: 2 x 4 warps cover the tile
constexpr int kMTiles = kWarpRows / 16, kNTiles = kWarpCols / 8;
// Halves past each staged row of kDepth: 80-byte rows, so that the 8 rows a
// warp's fragment loads read fall on different banks.
constexpr int kRowHalves = kDepth + 8;
constexpr int kVector = 8;                                  // halves a 16-byte load carries
constexpr int kShare = kTile * kDepth / kThreads;           // a thread's halves of an operand's slab
constexpr int kChunks = kShare / kVector;                   // ... as 16-byte chunks
static_assert(kShare == 16 && kChunks == 2, "a thread's share of a slab is two 16-byte chunks");

// How an operand's slab is read: 8 elements along the depth, 8 along the
// tile's side (which the first kernel stores transposed, and the second
// stages as read), or one at a time.
enum class Reads : int { kDepthVectors, kSideVectors, kElements };

// An operand as its slabs read it: element (i, k) of the tile's side i and
// the depth k at data[i * side_stride + k * depth_stride], `sides` by `depth`.
template <typename T>
struct Operand {
  const T* data;
  int64_t sides, depth, side_stride, depth_stride;
  Reads reads;
};

template <typename T>
Reads reads_of(const T* data, int64_t side_stride, int64_t depth_stride) {
  const bool aligned = reinterpret_cast<uintptr_t>(data) % 16 == 0;
  if (aligned && depth_stride == 1 && side_stride % kVector == 0) return Reads::kDepthVectors;
  if (aligned && side_stride == 1 && depth_stride % kVector == 0) return Reads::kSideVectors;
  return Reads::kElements;
}

// A 16-byte chunk of 8 halves.
struct alignas(16) Chunk {
  uint4 bits;
};

template <typename T>
__device__ __forceinline__ T element(const Operand<T>& o, int64_t i, int64_t k) {
  return i < o.sides && k < o.depth ? o.data[i * o.side_stride + k * o.depth_stride] : T(0.0f);
}

// Where a slab's chunk `chunk` of 8 elements lies (its first element's side and depth within the slab), as load_slab
// reads it and store_slab stages it: along the depth (depth vectors, and single elements in the same order) sides
// chunk / 4, depths (chunk % 4) * 8 on; side vectors depth chunk % 32, sides (chunk / 32) * 8 on, so that a warp's
// transposed stores go to 32 depths of one row at a time.
struct Place {
  int side, depth;
};
__device__ __forceinline__ Place place_of(Reads reads, int chunk) {
  if (reads == Reads::kSideVectors) return {chunk / kDepth * kVector, chunk % kDepth};
  return {chunk / (kDepth / kVector), chunk % (kDepth / kVector) * kVector};
}

// The thread's share of the slab at (i0, k0) into `share` (kShare halves).
template <typename T>
__device__ __forceinline__ void load_slab(const Operand<T>& o, int64_t i0, int64_t k0, T (&share)[kShare]) {
  const bool along_depth = o.reads != Reads::kSideVectors;
  for (int c = 0; c < kChunks; ++c) {
    const Place at = place_of(o.reads, int(threadIdx.x) + c * kThreads);
    const int64_t i = i0 + at.side, k = k0 + at.depth;
    T* out = share + c * kVector;
    if (o.reads == Reads::kElements) {
#pragma unroll
      for (int e = 0; e < kVector; ++e) out[e] = element(o, i, k + e);
      continue;
    }
    const bool whole = along_depth ? i < o.sides && k + kVector <= o.depth : k < o.depth && i + kVector <= o.sides;
    if (whole) {
      *reinterpret_cast<Chunk*>(out) = *reinterpret_cast<const Chunk*>(o.data + i * o.side_stride + k * o.depth_stride);
    } else {
#pragma unroll
      for (int e = 0; e < kVector; ++e) out[e] = along_depth ? element(o, i, k + e) : element(o, i + e, k);
    }
  }
}

// The share into the staged slab [kTile][kRowHalves] (side-major, depth contiguous).
template <typename T>
__device__ __forceinline__ void store_slab(Reads reads, const T (&share)[kShare], T (*staged)[kRowHalves]) {
  for (int c = 0; c < kChunks; ++c) {
    const Place at = place_of(reads, int(threadIdx.x) + c * kThreads);
    const T* in = share + c * kVector;
    if (reads == Reads::kSideVectors) {
#pragma unroll
      for (int e = 0; e < kVector; ++e) staged[at.side + e][at.depth] = in[e];
    } else {
      *reinterpret_cast<Chunk*>(&staged[at.side][at.depth]) = *reinterpret_cast<const Chunk*>(in);
    }
  }
}

// A warp's sums into C within its edges, rounded once (beta C added where beta is not 0): element q of
// fragment (mi, ni) is the tile's row g (+ 8 for q >= 2) and column 2t + q % 2, tiles 16 rows and 8 columns
// apart from (m0, n0).
template <int kMTiles, int kNTiles, typename TC>
__device__ __forceinline__ void store_accumulators(const float (&acc)[kMTiles][kNTiles][4], Matrix<TC> C, int64_t M,
                                                   int64_t N, int64_t m0, int64_t n0, int g, int t, float beta_f) {
#pragma unroll
  for (int mi = 0; mi < kMTiles; ++mi)
#pragma unroll
    for (int ni = 0; ni < kNTiles; ++ni)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int64_t m = m0 + mi * 16 + g + (q >= 2 ? 8 : 0), n = n0 + ni * 8 + 2 * t + q % 2;
        if (m < M && n < N) {
          TC& c = C.data[m * C.rs + n * C.cs];
          c = RoundTo<TC>::from(beta_f == 0.0f ? acc[mi][ni][q] : acc[mi][ni][q] + beta_f * widen(c));
        }
      }
}

template <typename T>
__device__ __forceinline__ uint32_t pair_at(const T* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

// Grid: blocks walk the tiles of C (row tiles by column tiles) in a grid-stride loop.
template <typename T, typename TC>
__global__ void __launch_bounds__(kThreads) tensor_core_gemm_kernel(Operand<T> a, Operand<T> b, Matrix<TC> C, TC beta) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  __shared__ __align__(16) T As[kTile][kRowHalves];
  __shared__ __align__(16) T Bs[kTile][kRowHalves];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;
  const int wm = warp / (kTile / kWarpCols) * kWarpRows, wn = warp % (kTile / kWarpCols) * kWarpCols;
  const float beta_f = widen(beta);
  const int64_t M = C.rows, N = C.cols, K = a.depth;
  const int64_t tiles_n = (N + kTile - 1) / kTile, tiles = (M + kTile - 1) / kTile * tiles_n;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t m0 = tile / tiles_n * kTile, n0 = tile % tiles_n * kTile;
    float acc[kMTiles][kNTiles][4] = {};
    T a_share[kShare], b_share[kShare];
    load_slab(a, m0, 0, a_share);
    load_slab(b, n0, 0, b_share);
    for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
      store_slab(a.reads, a_share, As);
      store_slab(b.reads, b_share, Bs);
      __syncthreads();
      if (k0 + kDepth < K) {
        load_slab(a, m0, k0 + kDepth, a_share);
        load_slab(b, n0, k0 + kDepth, b_share);
      }
#pragma unroll
      for (int kk = 0; kk < kDepth; kk += 16) {
        uint32_t af[kMTiles][4];
#pragma unroll
        for (int mi = 0; mi < kMTiles; ++mi) {
          const int r = wm + mi * 16 + g;
          af[mi][0] = pair_at(&As[r][kk + 2 * t]);
          af[mi][1] = pair_at(&As[r + 8][kk + 2 * t]);
          af[mi][2] = pair_at(&As[r][kk + 2 * t + 8]);
          af[mi][3] = pair_at(&As[r + 8][kk + 2 * t + 8]);
        }
#pragma unroll
        for (int ni = 0; ni < kNTiles; ++ni) {
          const int c = wn + ni * 8 + g;
          const uint32_t b0 = pair_at(&Bs[c][kk + 2 * t]), b1 = pair_at(&Bs[c][kk + 2 * t + 8]);
#pragma unroll
          for (int mi = 0; mi < kMTiles; ++mi) mma_k16<T>(acc[mi][ni], af[mi], b0, b1);
        }
      }
      __syncthreads();
    }
    store_accumulators(acc, C, M, N, m0 + wm, n0 + wn, g, t, beta_f);
  }
#endif
}

// Where each operand is read 16 bytes at a time, along the depth or along
// the side, in chunks that never cross its edges (whole_chunks, below: x Wᵀ,
// and the backward's products, which read an operand transposed), the slabs
// go straight from global to shared memory with cp.async, kStages of them in
// flight, and the fragments come out with ldmatrix: no registers hold the
// next slab and each fragment is one instruction. A slab is staged as memory
// holds it, so that every copy is one 16-byte chunk: depth vectors side-major
// (as the first kernel stages them), side vectors depth-major, whose 8 x 8
// matrices ldmatrix .trans turns into the same fragments.
//
// The kernel comes in two tilings (Tiling, below), both of 8 warps, 2 x 4
// over the block's tile: 128 x 128, each warp 64 x 32, two blocks a
// multiprocessor; and 128 x 256, each warp 64 x 64, one block a
// multiprocessor. A warp's k16 step loads its A fragments (one ldmatrix.x4
// per m16 tile) and its B fragments (one per n16 pair) and issues an mma per
// m16 x n8 pair: 6 loads for 16 mma at 64 x 32, which leaves the
// shared-memory reads the limit, 8 loads for 32 mma at 64 x 64, a third fewer
// a mma (and a quarter fewer bytes copied from global memory a product). The
// large tile's 128 accumulators a thread take most of a block's registers,
// one block a multiprocessor; it runs where its tiles fill the device for at
// least two waves (tensor_core_gemm, below).
constexpr int kStages = 4;

// A block's tile of C, kRows x kCols, its warps' parts, its stages and how
// many of its blocks a multiprocessor is meant to hold.
template <int kRows_, int kCols_, int kBlocks_>
struct Tiling {
  static constexpr int kRows = kRows_, kCols = kCols_, kBlocks = kBlocks_;
  static constexpr int kWarpRows = kRows / 2, kWarpCols = kCols / 4;
  static constexpr int kMTiles = kWarpRows / 16, kNTiles = kWarpCols / 8;
  static constexpr int kStageHalves = (kRows + kCols) * kDepth;  // A's slab, then B's
  static constexpr size_t kSharedBytes = size_t(kStages) * kStageHalves * 2;
  static_assert(kThreads == 8 * 32 && kNTiles % 2 == 0, "8 warps, 2 x 4, each a whole number of n16 pairs");
};
using SmallTiling = Tiling<128, 128, 2>;
using LargeTiling = Tiling<128, 256, 1>;

__device__ __forceinline__ void load_matrices(uint32_t (&r)[4], const void* at) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(at)));
}

// As load_matrices, each 8 x 8 matrix transposed: a thread gets (rows 2t, 2t + 1; column g) instead of (row g;
// columns 2t, 2t + 1).
__device__ __forceinline__ void load_matrices_transposed(uint32_t (&r)[4], const void* at) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(at)));
}

// Where the 16-byte chunk starting at (side i, depth k) of a staged slab of kSides sides lies, unpadded, its
// chunks permuted within their rows (an XOR swizzle) so that both the copies and the matrix loads reach 8
// different 16-byte bank groups of a 128-byte line in each of their 8-address phases:
// - depth vectors, side-major rows of kDepth halves (64 bytes, two rows a line): chunk k / 8 of row i at
//   (k / 8) ^ (i / 2 % 4). A matrix load reads one chunk of 8 rows from a multiple of 8 on: the row's half
//   of the line (i % 2) and its permutation (i / 2 % 4) tell all 8 apart; 8 copies fill two whole rows.
// - side vectors, depth-major rows of kSides halves (whole lines): chunk i / 8 of row k at (i / 8) ^ (k % 8). A
//   transposed matrix load reads one chunk of 8 rows (depths) from a multiple of 8 on, each permuted
//   differently; 8 copies fill 8 consecutive chunks of one row, permuted among themselves.
template <Reads R, int kSides>
__device__ __forceinline__ int staged_at(int i, int k) {
  if constexpr (R == Reads::kSideVectors) {
    static_assert(kSides % 64 == 0, "a depth-major row is whole 128-byte lines");
    return k * kSides + ((i / kVector) ^ (k % 8)) * kVector;
  } else {
    return i * kDepth + ((k / kVector) ^ (i / 2 % 4)) * kVector;
  }
}

// Where the copies place chunk `chunk` of a slab of kSides sides: depth vectors as place_of (4 chunks a side);
// side vectors at depth chunk / (kSides / 8), sides (chunk % (kSides / 8)) * 8 on, so that a warp reads 512
// contiguous bytes of one depth, or 256 of each of two.
template <Reads R, int kSides>
__device__ __forceinline__ Place copy_place(int chunk) {
  constexpr int kRowChunks = kSides / kVector;
  if (R == Reads::kSideVectors) return {chunk % kRowChunks * kVector, chunk / kRowChunks};
  return place_of(Reads::kDepthVectors, chunk);
}

// The thread's chunks of the slab at depth k0 of one operand (kSides sides from i0 on) into `staged`, zeros past
// its edges (a chunk lies wholly inside or wholly past them: whole_chunks).
template <Reads R, int kSides, typename T>
__device__ __forceinline__ void copy_slab(const Operand<T>& o, int64_t i0, int64_t k0, T* staged) {
  constexpr int kCopies = kSides * kDepth / kVector / kThreads;
#pragma unroll
  for (int c = 0; c < kCopies; ++c) {
    const Place at = copy_place<R, kSides>(int(threadIdx.x) + c * kThreads);
    const int64_t i = i0 + at.side, k = k0 + at.depth;
    const bool valid = i < o.sides && k < o.depth;
    const T* from = valid ? o.data + i * o.side_stride + k * o.depth_stride : o.data;
    copy_chunk(staged + staged_at<R, kSides>(at.side, at.depth), from, valid);
  }
}

// The four 8 x 8 matrices of an operand's fragments, this lane's matrix (lane / 8) starting at (side, depth) of the
// staged slab. Depth vectors: the matrix's rows are 8 sides, loaded as they are; side vectors: its rows are 8
// depths, loaded transposed. Either way a thread gets the pairs of consecutive depths mma.sync wants.
template <Reads R, int kSides, typename T>
__device__ __forceinline__ void load_fragments(uint32_t (&r)[4], const T* staged, int side, int depth) {
  const int row = threadIdx.x % 8;
  if constexpr (R == Reads::kSideVectors) {
    load_matrices_transposed(r, staged + staged_at<R, kSides>(side, depth + row));
  } else {
    load_matrices(r, staged + staged_at<R, kSides>(side + row, depth));
  }
}

template <typename Tile, typename T, typename TC, Reads kReadsA, Reads kReadsB>
__global__ void __launch_bounds__(kThreads, Tile::kBlocks)
    tensor_core_gemm_async_kernel(Operand<T> a, Operand<T> b, Matrix<TC> C, TC beta) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  constexpr int kRows = Tile::kRows, kCols = Tile::kCols, kMTiles = Tile::kMTiles, kNTiles = Tile::kNTiles;
  extern __shared__ __align__(128) unsigned char shared_bytes[];
  auto As = [&](int stage) { return reinterpret_cast<T*>(shared_bytes) + stage * Tile::kStageHalves; };
  auto Bs = [&](int stage) { return As(stage) + kRows * kDepth; };
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;
  const int wm = warp / 4 * Tile::kWarpRows, wn = warp % 4 * Tile::kWarpCols;
  const float beta_f = widen(beta);
  const int64_t M = C.rows, N = C.cols, K = a.depth;
  const int64_t slabs = (K + kDepth - 1) / kDepth;
  const int64_t tiles_n = (N + kCols - 1) / kCols, tiles = (M + kRows - 1) / kRows * tiles_n;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t m0 = tile / tiles_n * kRows, n0 = tile % tiles_n * kCols;
    float acc[kMTiles][kNTiles][4] = {};
    // Slabs 0 .. kStages - 2 in flight, one commit group each (empty past the last slab, so that the count of
    // groups a wait leaves pending always means the same slabs).
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < slabs) {
        copy_slab<kReadsA, kRows>(a, m0, s * kDepth, As(s));
        copy_slab<kReadsB, kCols>(b, n0, s * kDepth, Bs(s));
      }
      commit_copies();
    }
    for (int64_t slab = 0; slab < slabs; ++slab) {
      // Slab `slab` has arrived, and every warp is done with the stage the next copy overwrites.
      wait_copies<kStages - 2>();
      __syncthreads();
      const int64_t next = slab + kStages - 1;
      if (next < slabs) {
        copy_slab<kReadsA, kRows>(a, m0, next * kDepth, As(int(next % kStages)));
        copy_slab<kReadsB, kCols>(b, n0, next * kDepth, Bs(int(next % kStages)));
      }
      commit_copies();
      const T* as = As(int(slab % kStages));
      const T* bs = Bs(int(slab % kStages));
#pragma unroll
      for (int kk = 0; kk < kDepth; kk += 16) {
        // A's m16 tile: matrices a0..a3 at sides + 8 (lane / 8 % 2), depths + 8 (lane / 16). B's n16 pair: b0, b1
        // of its first n8 tile, then of its second, at sides + 8 (lane / 16), depths + 8 (lane / 8 % 2).
        uint32_t af[kMTiles][4], bf[kNTiles / 2][4];
#pragma unroll
        for (int mi = 0; mi < kMTiles; ++mi)
          load_fragments<kReadsA, kRows>(af[mi], as, wm + mi * 16 + lane / 8 % 2 * 8, kk + lane / 16 * 8);
#pragma unroll
        for (int np = 0; np < kNTiles / 2; ++np)
          load_fragments<kReadsB, kCols>(bf[np], bs, wn + np * 16 + lane / 16 * 8, kk + lane / 8 % 2 * 8);
#pragma unroll
        for (int np = 0; np < kNTiles / 2; ++np)
#pragma unroll
          for (int mi = 0; mi < kMTiles; ++mi) {
            mma_k16<T>(acc[mi][2 * np], af[mi], bf[np][0], bf[np][1]);
            mma_k16<T>(acc[mi][2 * np + 1], af[mi], bf[np][2], bf[np][3]);
          }
      }
    }
    // Every copy group drained and every warp past its last ldmatrix before the next tile's copies start.
    wait_copies<0>();
    __syncthreads();
    store_accumulators(acc, C, M, N, m0 + wm, n0 + wn, g, t, beta_f);
  }
#endif
}

// The current device's multiprocessors where it runs bfloat16/float16 mma (sm_80 on), 0 where not or where the
// device cannot be asked (the caller then takes the scalar kernel).
int half_mma_multiprocessors() {
  const DeviceFacts* facts = current_device_facts();
  return facts != nullptr && facts->major >= 8 ? facts->multiprocessors : 0;
}

// Whether the asynchronous kernel reads the operand: 16 bytes at a time along the depth or the side, every chunk
// wholly inside the operand or wholly past its edge (its depth, or its sides, a whole number of chunks), so that a
// chunk is copied or zero-filled as one.
template <typename T>
bool whole_chunks(const Operand<T>& o) {
  if (o.reads == Reads::kDepthVectors) return o.depth % kVector == 0;
  if (o.reads == Reads::kSideVectors) return o.sides % kVector == 0;
  return false;
}

// The asynchronous kernel in `Tile`, one block a tile up to kMaxGridBlocks.
template <typename Tile, typename T, typename TC, Reads kReadsA, Reads kReadsB>
void launch_async(cudaStream_t stream, int64_t tiles, const Operand<T>& a, const Operand<T>& b, Matrix<TC> C,
                  TC beta) {
  constexpr auto kernel = tensor_core_gemm_async_kernel<Tile, T, TC, kReadsA, kReadsB>;
  // The kernel's shared memory is past the default 48 KB: allowed once per device (at every launch on a device
  // past the first kDevices).
  constexpr int kDevices = 64;
  static std::atomic<bool> sized[kDevices] = {};
  int device = 0;
  LLTM_CUDA_CHECK(cudaGetDevice(&device));
  if (device >= kDevices || !sized[device].load(std::memory_order_acquire)) {
    LLTM_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Tile::kSharedBytes)));
    if (device < kDevices) sized[device].store(true, std::memory_order_release);
  }
  launch("tensor_core_gemm_async_kernel", kernel, dim3(unsigned(std::min(tiles, kMaxGridBlocks))), dim3(kThreads),
         Tile::kSharedBytes, stream, a, b, C, beta);
}

// The asynchronous kernel as each operand is read.
template <typename Tile, typename T, typename TC>
void launch_async(cudaStream_t stream, const Operand<T>& a, const Operand<T>& b, Matrix<TC> C, TC beta) {
  constexpr Reads kByDepth = Reads::kDepthVectors, kBySide = Reads::kSideVectors;
  const int64_t tiles = (C.rows + Tile::kRows - 1) / Tile::kRows * ((C.cols + Tile::kCols - 1) / Tile::kCols);
  if (a.reads == kByDepth)
    b.reads == kByDepth ? launch_async<Tile, T, TC, kByDepth, kByDepth>(stream, tiles, a, b, C, beta)
                        : launch_async<Tile, T, TC, kByDepth, kBySide>(stream, tiles, a, b, C, beta);
  else
    b.reads == kByDepth ? launch_async<Tile, T, TC, kBySide, kByDepth>(stream, tiles, a, b, C, beta)
                        : launch_async<Tile, T, TC, kBySide, kBySide>(stream, tiles, a, b, C, beta);
}

}  // namespace

template <typename T, typename TC>
bool tensor_core_gemm(cudaStream_t stream, Matrix<const T> A, Matrix<const T> B, Matrix<TC> C, TC beta) {
  // Below one 16 x 8 x 16 product a tile, the scalar kernel's single launch is as quick.
  if (C.rows < 16 || C.cols < 8 || A.cols < 16) return false;
  const int sms = half_mma_multiprocessors();
  if (sms == 0) return false;
  // A [M, K] read by rows (side m, depth k); B [K, N] by columns (side n, depth k).
  const Operand<T> a{A.data, A.rows, A.cols, A.rs, A.cs, reads_of(A.data, A.rs, A.cs)};
  const Operand<T> b{B.data, B.cols, B.rows, B.cs, B.rs, reads_of(B.data, B.cs, B.rs)};
  if (whole_chunks(a) && whole_chunks(b)) {
    // The large tile where its tiles keep every multiprocessor busy for two waves or more. Below that the small
    // tile's blocks, twice as many and two a multiprocessor, spread over more multiprocessors, and the large
    // tile's last, partial wave (up to half the time at two waves) weighs more than its faster step gains.
    const int64_t large_tiles = (C.rows + LargeTiling::kRows - 1) / LargeTiling::kRows *
                                ((C.cols + LargeTiling::kCols - 1) / LargeTiling::kCols);
    if (large_tiles >= 2 * int64_t(sms))
      launch_async<LargeTiling>(stream, a, b, C, beta);
    else
      launch_async<SmallTiling>(stream, a, b, C, beta);
    return true;
  }
  const int64_t tiles = (C.rows + kTile - 1) / kTile * ((C.cols + kTile - 1) / kTile);
  launch("tensor_core_gemm_kernel", tensor_core_gemm_kernel<T, TC>, dim3(unsigned(std::min(tiles, kMaxGridBlocks))),
         dim3(kThreads), 0, stream, a, b, C, beta);
  return true;
}

#define LLTM_TENSOR_CORE_GEMM(T, TC) \
  template bool tensor_core_gemm<T, TC>(cudaStream_t, Matrix<const T>, Matrix<const T>, Matrix<TC>, TC);
LLTM_TENSOR_CORE_GEMM(__nv_bfloat16, __nv_bfloat16)
LLTM_TENSOR_CORE_GEMM(__half, __half)
LLTM_TENSOR_CORE_GEMM(__nv_bfloat16, float)
LLTM_TENSOR_CORE_GEMM(__half, float)
#undef LLTM_TENSOR_CORE_GEMM

}  // namespace lltm::cuda
