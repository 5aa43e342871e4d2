// A cache-blocked, register-tiled GEMM for the three products of the LLTM:
//   C(i, j) = sum_p A(i, p) * B(p, j)
// A is read in place, one element at a time, and broadcast: rows of A are
// given as pointers (so the forward pass can gather the three gates' rows of
// the weights) with a stride `aps` along p. B is packed per cache block into
// zero-padded panels of NR columns, so any strides work and edges need no
// special case. Results go to a store callback one row segment at a time,
// which lets each caller fuse its epilogue (bias, transposed or split output).
//
// The micro-kernel keeps MR x NV vector accumulators in registers: per step of
// p it loads NV vectors of B and broadcasts MR scalars of A, so it is bound by
// multiply-add throughput, not by loads. Vector width follows the variant's
// target flags (cmake/cpu_isa.cmake): 64 bytes with AVX-512, 32 with AVX, 16
// otherwise (NEON on aarch64, with its 32 vector registers).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

#if defined(__AVX512F__)
constexpr int kVectorBytes = 64;
constexpr int kRegisters = 32;
#elif defined(__AVX__)
constexpr int kVectorBytes = 32;
constexpr int kRegisters = 16;
#elif defined(__aarch64__)
constexpr int kVectorBytes = 16;
constexpr int kRegisters = 32;
#else
constexpr int kVectorBytes = 16;
constexpr int kRegisters = 16;
#endif

template <typename T>
struct Vector {
  typedef T type __attribute__((vector_size(kVectorBytes)));
  static constexpr int lanes = kVectorBytes / sizeof(T);
};

// Rows of the micro-tile: 8 with 32 vector registers, 6 with 16 (MR x 2
// accumulators plus the loaded B vectors and a broadcast must fit).
constexpr int kTileRows = kRegisters >= 32 ? 8 : 6;
// Rows of the kernel for a last, short block of rows: 4 x 2 accumulators
// still cover the FMA latency (4 cycles at 2 a cycle).
constexpr int kShortRows = 4;

// Growable, 64-byte aligned scratch buffers kept per thread, type and Owner
// between calls (so a call after the first allocates nothing): kSlots of
// them for each Owner, so that two users never hand out each other's slots.
struct GemmScratch;
template <typename T, typename Owner = GemmScratch, int kSlots = 3>
T* scratch(size_t count, int slot) {
  struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffers[kSlots];
  Buffer& b = buffers[slot];
  const size_t need = (count * sizeof(T) + 63) / 64 * 64;
  if (need > b.bytes) {
    std::free(b.data);
    b.data = std::aligned_alloc(64, need);
    if (b.data == nullptr) {
      b.bytes = 0;
      throw std::bad_alloc();
    }
    b.bytes = need;
  }
  return static_cast<T*>(b.data);
}

// bp points at B(0, j0) with consecutive p rows `ldb` apart; Packed means
// ldb == NR, known at compile time (it keeps a register free in the loop).
// The MR x NR results go to out, rows ldo apart, added to what out holds
// when `add` (a tile of the caller's, ldo = NR, or C itself: see gemm_tiles).
template <typename T, int MR, int NV, bool Packed>
__attribute__((noinline)) void micro_kernel(int64_t kc, const T* const* rows, int64_t aps, const T* bp, int64_t ldb,
                                            T* out, int64_t ldo, bool add) {
  using V = typename Vector<T>::type;
  constexpr int L = Vector<T>::lanes;
  constexpr int NR = NV * L;
  V acc[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = V{};
  const T* r[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) r[i] = rows[i];
  int64_t off = 0;
  if (Packed) ldb = NR;
  for (int64_t p = 0; p < kc; ++p, off += aps, bp += ldb) {
    V b[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      if (Packed)
        b[v] = *reinterpret_cast<const V*>(bp + v * L);  // packed panels are 64-byte aligned
      else
        std::memcpy(&b[v], bp + v * L, sizeof(V));
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const T a = r[i][off];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] += a * b[v];
    }
  }
  if (add) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        V c;
        std::memcpy(&c, out + i * ldo + v * L, sizeof(V));
        acc[i][v] += c;
      }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) std::memcpy(out + i * ldo + v * L, &acc[i][v], sizeof(V));
}

// Packs B(p, j) = b[p*bps + j*bjs] for p in [0,kc), j in [0,nc) into panels
// of NR columns: panel q holds kc rows of NR values, zero beyond nc.
template <typename T, int NR>
void pack_b(int64_t kc, int64_t nc, const T* b, int64_t bps, int64_t bjs, T* out) {
  if (bjs == 1) {
    // Row by row across all panels: each source row is read once, in order
    // (panel by panel it would be re-read in NR-wide strips, a cache line per
    // row from a new page each time), and full panels move as whole vectors.
    using V = typename Vector<T>::type;
    constexpr int L = Vector<T>::lanes;
    const int64_t full = nc / NR * NR;
    for (int64_t p = 0; p < kc; ++p) {
      const T* src = b + p * bps;
      T* dst = out + p * NR;
      for (int64_t j0 = 0; j0 < full; j0 += NR, dst += kc * NR)
        for (int v = 0; v < NR / L; ++v) {
          V x;
          std::memcpy(&x, src + j0 + v * L, sizeof x);
          std::memcpy(dst + v * L, &x, sizeof x);
        }
      if (full < nc) {
        for (int64_t j = 0; j < nc - full; ++j) dst[j] = src[full + j];
        for (int64_t j = nc - full; j < NR; ++j) dst[j] = T(0);
      }
    }
    return;
  }
  for (int64_t j0 = 0; j0 < nc; j0 += NR) {
    const int64_t nr = std::min<int64_t>(NR, nc - j0);
    T* panel = out + (j0 / NR) * kc * NR;
    // Column-wise for a transposed B: each source column is read in order.
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t j = nr; j < NR; ++j) panel[p * NR + j] = T(0);
    for (int64_t j = 0; j < nr; ++j) {
      const T* src = b + (j0 + j) * bjs;
      for (int64_t p = 0; p < kc; ++p) panel[p * NR + j] = src[p * bps];
    }
  }
}

// The operands of one product. `row(i)` gives a pointer to A(i, 0).
template <typename T, typename RowFn>
struct GemmOperands {
  RowFn row;
  int64_t aps;      // stride of A along p
  const T* b;       // B(0, 0)
  int64_t bps, bjs; // strides of B along p and j
};

// Whether kc steps of a matrix whose steps are `stride` elements apart span
// no more than L1 holds beside the other operand's panel (of the 48 KB data
// cache of the CPUs this is tuned on).
template <typename T>
constexpr bool fits_l1(int64_t kc, int64_t stride) {
  return kc * stride * int64_t(sizeof(T)) <= 32 * 1024;
}

// Computes rows [m0, m1) and columns [n0, n1) of C over p in [0, K) and hands
// them over tile by tile as store(i0, rows, j0, cols, tile, tile_stride,
// first_block), C(i0 + a, j0 + b) being tile[a * tile_stride + b];
// `first_block` is false when the values are a later K-block's partial sums
// to be added.
// With `c` set (C row-major, rows ldc apart, unit column stride) full tiles
// go straight into C, added to it from the second K-block on or with
// `accumulate`, and only edge tiles go through `store`: where K is short
// (d_weights' batch) a tile's round trip through a buffer costs as much as
// computing it.
template <typename T, int NV, typename RowFn, typename Store>
void gemm_tiles(int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t K,
                const GemmOperands<T, RowFn>& op, Store&& store, T* c, int64_t ldc, bool accumulate) {
  constexpr int MR = kTileRows;
  constexpr int NR = NV * Vector<T>::lanes;
  // B's block (kc x nc) stays in L2. K is split only when it is long: every
  // extra K-block re-reads and re-writes C through `store`, which costs more
  // than streaming longer B panels from L2.
  constexpr int64_t kKc = 8192 / sizeof(T);
  const int64_t kc_max = std::min(kKc, K);
  const int64_t nc_max = std::max<int64_t>(NR, int64_t(512 * 1024 / sizeof(T)) / kc_max / NR * NR);
  T* bp = scratch<T>(size_t(kc_max) * size_t(std::min(n1 - n0, nc_max) + NR), 0);
  T* ap = scratch<T>(size_t(kc_max) * MR, 2);
  alignas(64) T tile[MR * NR];
  // B is read in place when its rows are contiguous and either few rows of
  // A would reuse a packed copy or B is one panel laid out as packed (NR
  // columns, rows NR apart).
  const bool direct = op.bjs == 1 && (m1 - m0 <= 4 * MR || op.bps == NR);
  const T* rows[MR];
  for (int64_t jc = n0; jc < n1; jc += nc_max) {
    const int64_t nc = std::min(nc_max, n1 - jc);
    for (int64_t pc = 0; pc < K; pc += kc_max) {
      const int64_t kc = std::min(kc_max, K - pc);
      const T* b_block = op.b + pc * op.bps + jc * op.bjs;
      // Full panels are read in place when direct; the rest is packed.
      const int64_t packed_from = direct ? nc / NR * NR : 0;
      if (packed_from < nc)
        pack_b<T, NR>(kc, nc - packed_from, b_block + packed_from * op.bjs, op.bps, op.bjs,
                      bp + (packed_from / NR) * kc * NR);
      for (int64_t ic = m0; ic < m1; ic += MR) {
        const int mr = int(std::min<int64_t>(MR, m1 - ic));
        // Rows past the edge repeat the last row; their results are dropped.
        for (int i = 0; i < MR; ++i) rows[i] = op.row(ic + std::min(i, mr - 1)) + pc * op.aps;
        // A strided along p (d_weights' dG^T) would take a new cache line
        // and page per step of the micro-kernel, for every panel of B: it is
        // packed once per row block into MR-interleaved rows instead (A(i, p)
        // at ap[p * MR + i]), which the micro-kernel reads with aps = MR;
        // unless the K-block's span of A fits in L1 (a short batch), where
        // those lines are read from L1 and packing would cost more.
        int64_t aps = op.aps;
        if (op.aps != 1 && nc > NR && !fits_l1<T>(kc, op.aps)) {
          for (int64_t p = 0; p < kc; ++p)
            for (int i = 0; i < MR; ++i) ap[p * MR + i] = rows[i][p * op.aps];
          for (int i = 0; i < MR; ++i) rows[i] = ap + i;
          aps = MR;
        }
        for (int64_t jr = 0; jr < nc; jr += NR) {
          // A last block of at most 4 rows takes the 4-row kernel (an AVX2
          // batch of 16 is 6 + 6 + 4 rows: 1/9 of the multiply-adds would
          // go to repeated rows).
          const bool short_block = mr <= kShortRows && kShortRows < MR;
          const int64_t nr = std::min<int64_t>(NR, nc - jr);
          const bool into_c = c != nullptr && mr == MR && nr == NR;
          T* out = into_c ? c + ic * ldc + jc + jr : tile;
          const int64_t ldo = into_c ? ldc : int64_t(NR);
          const bool add = into_c && (pc > 0 || accumulate);
          if (jr < packed_from) {
            if (short_block)
              micro_kernel<T, kShortRows, NV, false>(kc, rows, aps, b_block + jr, op.bps, out, ldo, add);
            else
              micro_kernel<T, MR, NV, false>(kc, rows, aps, b_block + jr, op.bps, out, ldo, add);
          } else {
            if (short_block)
              micro_kernel<T, kShortRows, NV, true>(kc, rows, aps, bp + (jr / NR) * kc * NR, NR, out, ldo, add);
            else
              micro_kernel<T, MR, NV, true>(kc, rows, aps, bp + (jr / NR) * kc * NR, NR, out, ldo, add);
          }
          if (!into_c) store(ic, mr, jc + jr, nr, static_cast<const T*>(tile), int64_t(NR), pc == 0);
        }
      }
    }
  }
}

// Picks the micro-tile width for the number of columns: one vector when C is
// narrow (the forward pass's batch), two otherwise. With `c` set (C
// row-major, rows ldc apart, unit column stride) full tiles go straight into
// C, set or, with `accumulate`, added to; `store` takes the rest.
template <typename T, typename RowFn, typename Store>
void gemm(int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t K, const GemmOperands<T, RowFn>& op,
          Store&& store, T* c = nullptr, int64_t ldc = 0, bool accumulate = false) {
  if (n1 - n0 <= Vector<T>::lanes)
    gemm_tiles<T, 1>(m0, m1, n0, n1, K, op, store, c, ldc, accumulate);
  else
    gemm_tiles<T, 2>(m0, m1, n0, n1, K, op, store, c, ldc, accumulate);
}

// Stores one row of a tile: dst[k * stride] = values[k], or += for a later
// K-block. Whole vectors are moved as such: a plain loop here becomes a call
// of memmove, which costs more than the copy for a tile's short rows.
template <typename T>
inline void store_row(T* dst, int64_t stride, const T* values, int64_t count, bool first) {
  using V = typename Vector<T>::type;
  constexpr int L = Vector<T>::lanes;
  if (stride == 1) {
    int64_t k = 0;
    for (; k + L <= count; k += L) {
      V v;
      std::memcpy(&v, values + k, sizeof v);
      if (!first) {
        V d;
        std::memcpy(&d, dst + k, sizeof d);
        v += d;
      }
      std::memcpy(dst + k, &v, sizeof v);
    }
    for (; k < count; ++k) dst[k] = first ? values[k] : dst[k] + values[k];
  } else {
    if (first)
      for (int64_t k = 0; k < count; ++k) dst[k * stride] = values[k];
    else
      for (int64_t k = 0; k < count; ++k) dst[k * stride] += values[k];
  }
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
