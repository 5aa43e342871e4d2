// Whole sequences in bfloat16 on AVX512_BF16 (lltm_sequence_forward /
// _backward on calls whose float tensors are all bfloat16 and contiguous,
// the backward's d_weights and d_bias also float32: api/run.cpp): every
// product on vdpbf16ps (bf16_gemm.h: bfloat16 operands, float32 sums), the
// cell's math and the carried cell state in float32, every argument read and
// written in its own type where it lives.
//
// The engine is sequence_cpu.cpp's, with its reserve kept in float32 and laid
// out as that engine keeps it (sequence_units.h), so that a forward run here
// and a backward staged through float32 (a strided gradient, say), or the
// other way round, read each other's reserve; the reserve's bytes are sized
// for the float32 that half-type calls compute in.
//
// Forward: the input half of the gate sums, x_t W_x^T + b, is one product
// over all T*B rows before the loop (in chunks for inference); each step
// adds the recurrent half h_{t-1} W_h^T, whose operand h_{t-1} is kept as
// bfloat16 pairs (the rounding the output gets anyway). A step's parts own
// panels of kNR state units, the same units in all three gates, so the
// cell's math runs on the tiles just formed with no barrier inside a step.
//
// Backward: a step's product is dh_{t-1} = dG_t W_h, split over the same
// panels, with the step's pointwise gradient fused onto it; the gate
// gradients dG of all steps are kept in bfloat16 (the products' operand),
// d_bias summed in float32 from their unrounded values. After the loop,
// d_inputs = dG W_x and d_weights = dG^T [h_{t-1}, x_t] are products over all
// T*B rows, d_weights summed in float32 across them and rounded once.
#include "kernels.h"

#include "bf16_rows.h"

#ifdef LLTM_HAVE_BF16_KERNELS

#include <algorithm>
#include <cstring>

#include "../op_args.h"
#include "denormals.h"
#include "gemm.h"
#include "sequence_lengths.h"
#include "sequence_units.h"
#include "thread_pool.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

using bf16::kMR;
using bf16::kNR;

// Scratch buffers (gemm.h's scratch): the shared ones are allocated by the
// calling thread before a parallel job; a part's own ones (kPart*) by
// whichever thread runs it.
enum Slot { kRecurrentPanels, kInputPanels, kInputPairs, kGates, kCell, kHidden, kGateGrads, kGateGradsT, kBiasSums,
            kPartPanel, kPartSums, kSlots };
struct SequenceBf16Scratch;
template <typename T>
T* buffer(Slot slot, size_t count) {
  return scratch<T, SequenceBf16Scratch, kSlots>(count, slot);
}

// Rows of a product's left operand taken in blocks of this many, so that
// their pairs stay in the L2 cache while the panels stream past them.
constexpr int64_t kRowBlock = 4 * kMR;
// Pairs of the sum along T*B rows taken at a time for d_weights: a panel of 32 KiB.
constexpr int64_t kSumBlock = 256;

int64_t words(int64_t k) { return (k + 1) / 2; }
int64_t panels(int64_t n) { return (n + kNR - 1) / kNR; }

struct Sizes {
  int64_t T, B, F, S, G, K, R;  // R = T*B rows
  explicit Sizes(const SequenceSizes& n)
      : T(n.steps), B(n.batch), F(n.features), S(n.state), G(3 * n.state), K(n.state + n.features),
        R(n.steps * n.batch) {}
};

const uint16_t* in(const lltm_tensor* t) { return t != nullptr ? static_cast<const uint16_t*>(t->data) : nullptr; }
uint16_t* out(const lltm_tensor* t) { return static_cast<uint16_t*>(t->data); }

// The kMR row pointers of rows [r0, r0 + kMR) of `rows` (ld words apart); rows past `n` repeat the last.
void row_block(const uint32_t** a, const uint32_t* rows, int64_t ld, int64_t r0, int64_t n) {
  for (int i = 0; i < kMR; ++i) a[i] = rows + std::min<int64_t>(r0 + i, n - 1) * ld;
}

// Rows [m0, m1) of A (pairs, lda words apart) times the panels `bp` (k2 words of kNR columns each,
// n columns in all): each kMR x kNR tile handed to emit(r0, rows, j0, cols, tile).
template <typename Emit>
LLTM_BF16_TARGET void product(int64_t m0, int64_t m1, const uint32_t* a_rows, int64_t lda, int64_t k2,
                              const uint32_t* bp, int64_t n, Emit&& emit) {
  alignas(64) float tile[kMR * kNR];
  const uint32_t* a[kMR];
  for (int64_t b0 = m0; b0 < m1; b0 += kRowBlock) {
    const int64_t b1 = std::min(b0 + kRowBlock, m1);
    for (int64_t p = 0; p < panels(n); ++p)
      for (int64_t r0 = b0; r0 < b1; r0 += kMR) {
        row_block(a, a_rows, lda, r0, m1);
        bf16::tile(k2, a, bp + p * k2 * kNR, tile, kNR);
        emit(r0, std::min<int64_t>(kMR, b1 - r0), p * kNR, std::min<int64_t>(kNR, n - p * kNR), tile);
      }
  }
}

// Rows of bfloat16 (ld elements apart) as rows of pairs: in place where they are pairs already.
const uint32_t* as_pairs(const uint16_t* m, int64_t rows, int64_t k, int64_t ld, Slot slot) {
  if (k % 2 == 0 && ld % 2 == 0 && reinterpret_cast<uintptr_t>(m) % 4 == 0) return reinterpret_cast<const uint32_t*>(m);
  const int64_t k2 = words(k);
  uint32_t* pairs = buffer<uint32_t>(slot, size_t(rows * k2));
  for (int64_t r = 0; r < rows; ++r) bf16::pack_pairs(m + r * ld, k, pairs + r * k2);
  return pairs;
}

template <bool Keep>
LLTM_BF16_TARGET void forward(const SequenceForwardArgs& a) {
  const Sizes n(a.n);
  const int64_t T = n.T, B = n.B, F = n.F, S = n.S, G = n.G, K = n.K;
  const int64_t s2 = words(S), f2 = words(F), Q = panels(S), GQ = panels(G);
  const uint16_t *x = in(a.inputs), *W = in(a.weights), *bias = in(a.bias);
  uint16_t* outputs = out(a.outputs);
  const Lengths length(a.lengths, T, "lltm_sequence_forward");

  // Training projects every step into the reserve's factors (each unit's own part overwrites its
  // sums with its factors); inference a chunk of steps at a time into about a megabyte.
  float* const factors_all = static_cast<float*>(a.reserve);
  float* const slope_all = Keep ? factors_all + n.R * G : nullptr;
  float* const h_all = Keep ? slope_all + n.R * S : nullptr;
  const int64_t chunk = Keep ? T : std::clamp<int64_t>((int64_t(1) << 18) / (B * G), 1, T);
  float* const gx_chunk = Keep ? factors_all : buffer<float>(kGates, size_t(chunk * B * G));

  // W_h^T as gate g's panel q: k2 = s2 words of kNR units; W_x^T as GQ panels over all 3S gate sums.
  uint32_t* const wh = buffer<uint32_t>(kRecurrentPanels, size_t(3 * Q * s2 * kNR));
  uint32_t* const wx = buffer<uint32_t>(kInputPanels, size_t(GQ * f2 * kNR));
  float* const cell = buffer<float>(kCell, size_t(B * S));
  // h_{t-1} and h_t as rows of s2 pairs (an odd S's last pair padded with zero, which the products read).
  uint16_t* const ring = buffer<uint16_t>(kHidden, size_t(2 * B * 2 * s2));
  std::fill(ring, ring + 2 * B * 2 * s2, uint16_t(0));
  for (int64_t b = 0; b < B; ++b) {
    bf16::load_row(cell + b * S, in(a.c0) + b * S, S);
    std::memcpy(ring + b * 2 * s2, in(a.h0) + b * S, size_t(S) * 2);
  }
  parallel_flushed(parts_for(double(G) * K), [&](int part, int n_parts) {
    int64_t p0, p1;
    split_range(3 * Q + GQ, 1, part, n_parts, p0, p1);
    for (int64_t p = p0; p < p1; ++p)
      if (p < 3 * Q)
        bf16::pack_transposed(W + p / Q * S * K, K, S, S, p % Q * kNR, wh + p * s2 * kNR);
      else
        bf16::pack_transposed(W + S, K, F, G, (p - 3 * Q) * kNR, wx + (p - 3 * Q) * f2 * kNR);
  });

  // Input sums (+ bias) of steps [t0, t1) into the rows of gx.
  auto project = [&](int64_t t0, int64_t t1, float* gx) LLTM_BF16_TARGET {
    const int64_t rows = (t1 - t0) * B;
    const uint32_t* pairs = as_pairs(x + t0 * B * F, rows, F, F, kInputPairs);
    parallel_flushed(parts_for(double(rows) * G * F), [&](int part, int n_parts) LLTM_BF16_TARGET {
      int64_t m0, m1;
      split_range(rows, kMR, part, n_parts, m0, m1);
      product(m0, m1, pairs, f2, f2, wx, G,
              [&](int64_t r0, int64_t mr, int64_t j0, int64_t cols, const float* tile) LLTM_BF16_TARGET {
                for (int64_t i = 0; i < mr; ++i) {
                  float* dst = gx + (r0 + i) * G + j0;
                  for (int64_t j = 0; j < cols; ++j) dst[j] = tile[i * kNR + j] + bf16::value(bias[j0 + j]);
                }
              });
    });
  };

  // Asked before every step, as the pool sizes its wake-ups by this thread's latest parts_for
  // (and expect_work: the steps still to come, which run back to back).
  const double step_work = double(B) * G * S;
  constexpr int L = Vector<float>::lanes;
  for (int64_t t = 0; t < T; ++t) {
    if (t % chunk == 0) project(t, std::min(t + chunk, T), gx_chunk);
    const int step_parts = int(std::min<int64_t>(parts_for(step_work), Q));
    expect_work(step_work * double(T - t));
    float* const gx = gx_chunk + (t % chunk) * B * G;
    const uint16_t* const h_prev = ring + (t & 1) * B * 2 * s2;
    uint16_t* const h_next = ring + ((t + 1) & 1) * B * 2 * s2;
    float* const slope = Keep ? slope_all + t * B * S : nullptr;
    float* const h32 = Keep ? h_all + t * B * S : nullptr;
    parallel_flushed(step_parts, [&](int part, int n_parts) LLTM_BF16_TARGET {
      int64_t q0, q1;
      split_range(Q, 1, part, n_parts, q0, q1);
      alignas(64) float tiles[3][kMR * kNR], h_row[kNR];
      const uint32_t* rows[kMR];
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t u0 = q * kNR, nr = std::min<int64_t>(kNR, S - u0);
        for (int64_t b0 = 0; b0 < B; b0 += kMR) {
          row_block(rows, reinterpret_cast<const uint32_t*>(h_prev), s2, b0, B);
          for (int g = 0; g < 3; ++g) bf16::tile(s2, rows, wh + (g * Q + q) * s2 * kNR, tiles[g], kNR);
          for (int64_t i = 0; i < std::min<int64_t>(kMR, B - b0); ++i) {
            const int64_t b = b0 + i, o = b * S + u0, og = b * G + u0;
            uint16_t* const dst = outputs + (t * B + b) * S + u0;
            if (t >= length[b]) {
              // Past the sample's length (so t >= 1): the state carried, the output and the factors zero.
              std::memcpy(h_next + b * 2 * s2 + u0, h_prev + b * 2 * s2 + u0, size_t(nr) * 2);
              std::fill(dst, dst + nr, uint16_t(0));
              if (Keep) {
                std::memcpy(h32 + o, h32 - B * S + o, size_t(nr) * sizeof(float));
                for (int g = 0; g < 3; ++g) std::fill(gx + og + g * S, gx + og + g * S + nr, 0.0f);
                std::fill(slope + o, slope + o + nr, 0.0f);
              }
              continue;
            }
            float* const h = Keep ? h32 + o : h_row;
            const float *t0 = tiles[0] + i * kNR, *t1 = tiles[1] + i * kNR, *t2 = tiles[2] + i * kNR;
            int64_t u = 0;
            for (; u + L <= nr; u += L)
              forward_unit<Keep, FloatVector>(t0 + u, t1 + u, t2 + u, gx + og + u, S, cell + o + u, h + u,
                                              Keep ? slope + o + u : nullptr);
            for (; u < nr; ++u)
              forward_unit<Keep, float>(t0 + u, t1 + u, t2 + u, gx + og + u, S, cell + o + u, h + u,
                                        Keep ? slope + o + u : nullptr);
            bf16::store_row(h_next + b * 2 * s2 + u0, h, nr, false);
            std::memcpy(dst, h_next + b * 2 * s2 + u0, size_t(nr) * 2);
          }
        }
      }
    });
  }
  const uint16_t* last = ring + (T & 1) * B * 2 * s2;
  for (int64_t b = 0; b < B; ++b) {
    std::memcpy(out(a.last_h) + b * S, last + b * 2 * s2, size_t(S) * 2);
    bf16::store_row(out(a.last_cell) + b * S, cell + b * S, S, false);
  }
}

LLTM_BF16_TARGET void backward(const SequenceBackwardArgs& a) {
  const Sizes n(a.n);
  const int64_t T = n.T, B = n.B, F = n.F, S = n.S, G = n.G, K = n.K, R = n.R;
  const int64_t g2 = words(G), r2 = words(R), ldd = 2 * g2, Q = panels(S), FQ = panels(F), KQ = panels(K);
  const uint16_t *x = in(a.inputs), *W = in(a.weights), *h0 = in(a.h0);
  const uint16_t *grad_outputs = in(a.grad_outputs), *grad_last_h = in(a.grad_last_h);
  const float* const factors_all = static_cast<const float*>(a.reserve);
  const float* const slope_all = factors_all + R * G;
  const float* const h_all = slope_all + R * S;
  const Lengths length(a.lengths, T, "lltm_sequence_backward");

  // W_h as Q panels of kNR state units over all 3S rows, W_x as FQ panels of input features.
  uint32_t* const wh = buffer<uint32_t>(kRecurrentPanels, size_t(Q * g2 * kNR));
  uint32_t* const wx = buffer<uint32_t>(kInputPanels, size_t(FQ * g2 * kNR));
  // dG of every step in bfloat16, rows padded to whole pairs (the padding zero).
  uint16_t* const dg_all = buffer<uint16_t>(kGateGrads, size_t(R * ldd));
  float* const dc = buffer<float>(kCell, size_t(B * S));
  float* const bias_sums = buffer<float>(kBiasSums, size_t(G));
  std::fill(bias_sums, bias_sums + G, 0.0f);
  if (ldd > G)
    for (int64_t r = 0; r < R; ++r) dg_all[r * ldd + G] = 0;
  for (int64_t b = 0; b < B; ++b)
    if (a.grad_last_cell != nullptr)
      bf16::load_row(dc + b * S, in(a.grad_last_cell) + b * S, S);
    else
      std::fill(dc + b * S, dc + (b + 1) * S, 0.0f);
  parallel_flushed(parts_for(double(G) * K), [&](int part, int n_parts) {
    int64_t p0, p1;
    split_range(Q + FQ, 1, part, n_parts, p0, p1);
    for (int64_t p = p0; p < p1; ++p)
      if (p < Q)
        bf16::pack_rows(W, K, G, S, p * kNR, wh + p * g2 * kNR);
      else
        bf16::pack_rows(W + S, K, G, F, (p - Q) * kNR, wx + (p - Q) * g2 * kNR);
  });

  // Asked before every step, as the pool sizes its wake-ups by this thread's latest parts_for
  // (and expect_work: the steps still to come, which run back to back).
  const double step_work = double(B) * G * S;
  constexpr int L = Vector<float>::lanes;
  for (int64_t t = T - 1; t >= 0; --t) {
    const float* const factors = factors_all + t * B * G;
    const float* const slope = slope_all + t * B * S;
    uint16_t* const dg = dg_all + t * B * ldd;
    const uint32_t* const dg_next = reinterpret_cast<const uint32_t*>(dg + B * ldd);
    const int step_parts = int(std::min<int64_t>(parts_for(step_work), Q));
    expect_work(step_work * double(t + 1));
    parallel_flushed(step_parts, [&](int part, int n_parts) LLTM_BF16_TARGET {
      int64_t q0, q1;
      split_range(Q, 1, part, n_parts, q0, q1);
      alignas(64) float tile[kMR * kNR], d[3][kNR];
      const uint32_t* rows[kMR];
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t u0 = q * kNR, nr = std::min<int64_t>(kNR, S - u0);
        for (int64_t b0 = 0; b0 < B; b0 += kMR) {
          // dh_t: the recurrent product of step t+1's gate gradients (none after the last step)
          // plus the given gradients (grad_last_h at each sample's own last step).
          if (t + 1 < T) {
            row_block(rows, dg_next, g2, b0, B);
            bf16::tile(g2, rows, wh + q * g2 * kNR, tile, kNR);
          } else {
            std::fill(tile, tile + kMR * kNR, 0.0f);
          }
          for (int64_t i = 0; i < std::min<int64_t>(kMR, B - b0); ++i) {
            const int64_t b = b0 + i, o = b * S + u0, og = b * G + u0;
            uint16_t* const dst = dg + b * ldd + u0;
            if (t >= length[b]) {
              // Past the sample's length: no gate gradient, the cell's gradient carried unchanged.
              for (int g = 0; g < 3; ++g) std::fill(dst + g * S, dst + g * S + nr, uint16_t(0));
              continue;
            }
            float* const dh = tile + i * kNR;
            for (int64_t j = 0; j < nr; ++j) {
              if (grad_outputs != nullptr) dh[j] += bf16::value(grad_outputs[(t * B + b) * S + u0 + j]);
              if (grad_last_h != nullptr && t == length[b] - 1) dh[j] += bf16::value(grad_last_h[o + j]);
            }
            int64_t u = 0;
            for (; u + L <= nr; u += L) {
              const auto r = backward_unit(load<FloatVector>(dh + u), factors + og + u, slope + o + u, S, dc + o + u);
              store(d[0] + u, r.i);
              store(d[1] + u, r.o);
              store(d[2] + u, r.z);
            }
            for (; u < nr; ++u) {
              const auto r = backward_unit(dh[u], factors + og + u, slope + o + u, S, dc + o + u);
              d[0][u] = r.i;
              d[1][u] = r.o;
              d[2][u] = r.z;
            }
            for (int g = 0; g < 3; ++g) {
              bf16::store_row(dst + g * S, d[g], nr, false);
              float* const sums = bias_sums + g * S + u0;
              for (int64_t j = 0; j < nr; ++j) sums[j] += d[g][j];
            }
          }
        }
      }
    });
  }

  const auto* const dg_rows = reinterpret_cast<const uint32_t*>(dg_all);
  // dG^T as G rows of r2 pairs along the T*B rows (an odd count's last pair padded with zero), rows a
  // cache line more than a power of two apart so that a column of them does not share one cache set.
  const int64_t ldt = (r2 + 15) / 16 * 16 + 16;
  uint32_t* const dgt = buffer<uint32_t>(kGateGradsT, size_t(G * ldt));
  parallel_flushed(parts_for(double(R) * G), [&](int part, int n_parts) LLTM_BF16_TARGET {
    int64_t c0, c1;
    split_range(G, kNR, part, n_parts, c0, c1);
    alignas(64) uint32_t w[kNR];
    for (int64_t c = c0; c < c1; c += kNR) {
      const int64_t cols = std::min<int64_t>(kNR, c1 - c);
      for (int64_t q = 0; q < r2; ++q) {
        const uint16_t* lo = dg_all + 2 * q * ldd + c;
        bf16::pair_rows(lo, 2 * q + 1 < R ? lo + ldd : nullptr, cols, w);
        for (int64_t j = 0; j < cols; ++j) dgt[(c + j) * ldt + q] = w[j];
      }
    }
  });

  // d_weights rows n, columns in panels of kNR: sum over row pairs of dG^T's pairs times
  // X = [h_{t-1}, x_t]'s pairs, h_{t-1} being h0 (t = 0) or the reserve's h rounded as its product read it.
  parallel_flushed(parts_for(double(R) * G * K), [&](int part, int n_parts) LLTM_BF16_TARGET {
    int64_t p0, p1;
    split_range(KQ, 1, part, n_parts, p0, p1);
    if (p0 >= p1) return;
    uint32_t* const panel = buffer<uint32_t>(kPartPanel, size_t(kSumBlock * kNR));
    // Whole row blocks: a tile writes kMR rows.
    float* const sums = buffer<float>(kPartSums, size_t((G + kMR - 1) / kMR * kMR * kNR));
    const uint32_t* rows[kMR];
    // Row r of X = [h_{t-1}, x_t] at columns [j0, j0 + cols) as bfloat16.
    alignas(64) uint16_t x_rows[2][kNR];
    auto x_row = [&](int64_t r, int64_t j0, int64_t cols, uint16_t* dst) LLTM_BF16_TARGET {
      const int64_t nh = std::max<int64_t>(0, std::min(S, j0 + cols) - j0);
      if (nh > 0) {
        if (r < B)
          std::memcpy(dst, h0 + r * S + j0, size_t(nh) * 2);
        else
          bf16::store_row(dst, h_all + (r - B) * S + j0, nh, false);
      }
      if (nh < cols) std::memcpy(dst + nh, x + r * F + j0 + nh - S, size_t(cols - nh) * 2);
    };
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t j0 = p * kNR, cols = std::min<int64_t>(kNR, K - j0);
      for (int64_t w0 = 0; w0 < r2; w0 += kSumBlock) {
        const int64_t kw = std::min(kSumBlock, r2 - w0);
        for (int64_t q = 0; q < kw; ++q) {
          const int64_t r = 2 * (w0 + q);
          for (auto& row : x_rows) std::fill(row + cols, row + kNR, uint16_t(0));
          x_row(r, j0, cols, x_rows[0]);
          if (r + 1 < R) x_row(r + 1, j0, cols, x_rows[1]);
          bf16::pair_rows(x_rows[0], r + 1 < R ? x_rows[1] : nullptr, kNR, panel + q * kNR);
        }
        for (int64_t r0 = 0; r0 < G; r0 += kMR) {
          row_block(rows, dgt + w0, ldt, r0, G);
          bf16::tile(kw, rows, panel, sums + r0 * kNR, kNR, w0 > 0);
        }
      }
      for (int64_t c = 0; c < G; ++c) bf16::store_gradient(*a.d_weights, c * K + j0, sums + c * kNR, cols, a.accumulate);
    }
  });

  // d_inputs = dG W_x over all rows (when asked for); d_h0 = dG_0 W_h (step 0's recurrent product).
  uint16_t *d_inputs = a.d_inputs != nullptr ? out(a.d_inputs) : nullptr, *d_h0 = out(a.d_h0);
  parallel_flushed(parts_for(double(R) * G * F), [&](int part, int n_parts) LLTM_BF16_TARGET {
    int64_t m0, m1;
    split_range(R, kMR, part, n_parts, m0, m1);
    if (d_inputs != nullptr)
      product(m0, m1, dg_rows, g2, g2, wx, F,
              [&](int64_t r0, int64_t mr, int64_t j0, int64_t cols, const float* tile) LLTM_BF16_TARGET {
                for (int64_t i = 0; i < mr; ++i)
                  bf16::store_row(d_inputs + (r0 + i) * F + j0, tile + i * kNR, cols, false);
              });
    int64_t b0, b1;
    split_range(B, kMR, part, n_parts, b0, b1);
    product(b0, b1, dg_rows, g2, g2, wh, S,
            [&](int64_t r0, int64_t mr, int64_t j0, int64_t cols, const float* tile) LLTM_BF16_TARGET {
              for (int64_t i = 0; i < mr; ++i) bf16::store_row(d_h0 + (r0 + i) * S + j0, tile + i * kNR, cols, false);
            });
  });

  bf16::store_gradient(*a.d_bias, 0, bias_sums, G, a.accumulate);
  for (int64_t b = 0; b < B; ++b) bf16::store_row(out(a.d_c0) + b * S, dc + b * S, S, false);
}

}  // namespace

void run_SEQUENCE_FORWARD_bf16(const OpCall& call) {
  const SequenceForwardArgs args = sequence_forward_args(call);
  args.reserve != nullptr ? forward<true>(args) : forward<false>(args);
}
void run_SEQUENCE_BACKWARD_bf16(const OpCall& call) { backward(sequence_backward_args(call)); }

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE

#endif
