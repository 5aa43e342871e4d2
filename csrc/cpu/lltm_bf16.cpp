// The LLTM step in bfloat16 on AVX512_BF16: the products on vdpbf16ps
// (bf16_gemm.h: bfloat16 operands, float32 sums), the cell's pointwise math in
// float32, every tensor read and written in its own type where it lives,
// with no float32 copy of the operands. For calls whose tensors are all
// bfloat16 and contiguous, the backward's d_weights and d_bias also float32
// (api/run.cpp); other bfloat16 calls are staged through float32.
#include "kernels.h"

#include "bf16_rows.h"

#ifdef LLTM_HAVE_BF16_KERNELS

#include <algorithm>
#include <vector>

#include "../op_args.h"
#include "cell_math.h"
#include "gemm.h"
#include "h_gradient_sum.h"
#include "thread_pool.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

using bf16::kMR;
using bf16::kNR;

// Scratch buffers of these kernels (gemm.h's scratch): slots 0-2 are shared by the
// parts of a call (allocated by the caller), 3-5 each part's own.
struct Bf16Scratch;
template <typename T>
T* buffer(size_t count, int slot) {
  return scratch<T, Bf16Scratch, 6>(count, slot);
}

const uint16_t* in(const lltm_tensor* t) { return static_cast<const uint16_t*>(t->data); }
uint16_t* out(const lltm_tensor* t) { return static_cast<uint16_t*>(t->data); }

using bf16::load16;
using bf16::store16;

LLTM_BF16_TARGET void forward(const ForwardArgs& args) {
  const int64_t B = args.n.batch, F = args.n.features, S = args.n.state, K = S + F, G = 3 * S;
  const uint16_t *input = in(args.input), *old_h = in(args.old_h), *W = in(args.weights), *bias = in(args.bias);
  const uint16_t* old_cell = in(args.old_cell);
  uint16_t *X = out(args.X), *gates = out(args.gate_weights);
  uint16_t *new_h = out(args.new_h), *new_cell = out(args.new_cell), *ig = out(args.input_gate);
  uint16_t *og = out(args.output_gate), *cc = out(args.candidate_cell);
  for (int64_t b = 0; b < B; ++b) {
    std::memcpy(X + b * K, old_h + b * S, size_t(S) * 2);
    std::memcpy(X + b * K + S, input + b * F, size_t(F) * 2);
  }
  // G = X W^T with the batch as the tiles' rows and each gate's units as their columns, so that a tile's
  // rows are the cell's rows: the three gates' tiles of the same units give the pointwise math its inputs
  // and every output is written along its rows. X's rows are read as pairs in place where they can be.
  const int64_t k2 = (K + 1) / 2;
  const bool direct = K % 2 == 0 && reinterpret_cast<uintptr_t>(X) % 4 == 0;
  uint32_t* xa = direct ? nullptr : buffer<uint32_t>(size_t(B * k2), 0);
  if (!direct)
    for (int64_t b = 0; b < B; ++b) bf16::pack_pairs(X + b * K, K, xa + b * k2);
  const uint32_t* x_rows = direct ? reinterpret_cast<const uint32_t*>(X) : xa;
  const int parts = int(std::min<int64_t>(parts_for(double(B) * G * K), (S + kNR - 1) / kNR));
  parallel(parts, [&](int part, int n_parts) LLTM_BF16_TARGET {
    int64_t s0, s1;
    split_range(S, kNR, part, n_parts, s0, s1);
    uint32_t* wp = buffer<uint32_t>(size_t(3 * k2 * kNR), 3);
    alignas(64) float tiles[3][kMR * kNR], bias_of[3][kNR];
    constexpr int L = Vector<float>::lanes;
    for (int64_t c0 = s0; c0 < s1; c0 += kNR) {
      const int64_t cols = std::min<int64_t>(kNR, s1 - c0);
      for (int g = 0; g < 3; ++g) {
        bf16::pack_transposed(W + g * S * K, K, K, c0 + cols, c0, wp + g * k2 * kNR);
        for (int64_t j = 0; j < kNR; ++j) bias_of[g][j] = j < cols ? bf16::value(bias[g * S + c0 + j]) : 0.0f;
      }
      for (int64_t b0 = 0; b0 < B; b0 += kMR) {
        const uint32_t* a[kMR];
        for (int i = 0; i < kMR; ++i) a[i] = x_rows + std::min(b0 + i, B - 1) * k2;
        for (int g = 0; g < 3; ++g) bf16::tile(k2, a, wp + g * k2 * kNR, tiles[g], kNR);
        for (int64_t i = 0; i < std::min<int64_t>(kMR, B - b0); ++i) {
          const int64_t b = b0 + i, row = b * S + c0;
          const float *t0 = tiles[0] + i * kNR, *t1 = tiles[1] + i * kNR, *t2 = tiles[2] + i * kNR;
          int64_t j = 0;
          for (; j + L <= cols; j += L) {
            const FloatVector g0 = load<FloatVector>(t0 + j) + load<FloatVector>(bias_of[0] + j);
            const FloatVector g1 = load<FloatVector>(t1 + j) + load<FloatVector>(bias_of[1] + j);
            const FloatVector g2 = load<FloatVector>(t2 + j) + load<FloatVector>(bias_of[2] + j);
            const auto r = cell_forward(g0, g1, g2, load16(old_cell + row + j));
            store16(new_h + row + j, r.h);
            store16(new_cell + row + j, r.cell);
            store16(ig + row + j, r.i);
            store16(og + row + j, r.o);
            store16(cc + row + j, r.z);
            store16(gates + b * G + c0 + j, g0);
            store16(gates + b * G + S + c0 + j, g1);
            store16(gates + b * G + 2 * S + c0 + j, g2);
          }
          for (; j < cols; ++j) {
            const float g0 = t0[j] + bias_of[0][j], g1 = t1[j] + bias_of[1][j], g2 = t2[j] + bias_of[2][j];
            const auto r = cell_forward(g0, g1, g2, bf16::value(old_cell[row + j]));
            new_h[row + j] = bf16::bits_of(r.h);
            new_cell[row + j] = bf16::bits_of(r.cell);
            ig[row + j] = bf16::bits_of(r.i);
            og[row + j] = bf16::bits_of(r.o);
            cc[row + j] = bf16::bits_of(r.z);
            gates[b * G + c0 + j] = bf16::bits_of(g0);
            gates[b * G + S + c0 + j] = bf16::bits_of(g1);
            gates[b * G + 2 * S + c0 + j] = bf16::bits_of(g2);
          }
        }
      }
    }
  });
}

LLTM_BF16_TARGET void backward(const BackwardArgs& given) {
  BackwardArgs args = given;
  std::vector<uint16_t> h_gradient;
  lltm_tensor h_gradient_view;
  join_h_gradients(args, h_gradient, h_gradient_view, bf16::value, bf16::bits_of);
  const int64_t B = args.n.batch, S = args.n.state, F = args.n.features, K = S + F, G = 3 * S;
  const int64_t g2 = (G + 1) / 2, b2 = (B + 1) / 2, ldd = 2 * g2;
  // dG in bfloat16, rows padded to whole pairs, and dG^T as rows of pairs along the batch.
  uint16_t* dg = buffer<uint16_t>(size_t(B * ldd), 0);
  uint32_t* dgt = buffer<uint32_t>(size_t(G * b2), 1);
  if (ldd > G)
    for (int64_t b = 0; b < B; ++b) dg[b * ldd + G] = 0;
  const uint16_t *grad_h = in(args.grad_h), *grad_cell = in(args.grad_cell), *new_cell = in(args.new_cell);
  const uint16_t *ig = in(args.input_gate), *og = in(args.output_gate), *cc = in(args.candidate_cell);
  const uint16_t *gw = in(args.gate_weights), *W = in(args.weights), *X = in(args.X);
  uint16_t* d_old_cell = out(args.d_old_cell);
  uint16_t *d_old_h = out(args.d_old_h), *d_input = out(args.d_input);
  const double product_work = 2.0 * B * G * K;
  constexpr int L = Vector<float>::lanes;

  const int pointwise_parts = int(std::min<int64_t>(parts_for(product_work), (S + L - 1) / L));
  parallel(pointwise_parts, [&](int part, int n_parts) LLTM_BF16_TARGET {
    int64_t s0, s1;
    split_range(S, L, part, n_parts, s0, s1);
    const int64_t len = s1 - s0;
    if (len == 0) return;
    // d_bias in float32 from the unrounded gate gradients.
    float* sums = buffer<float>(size_t(3 * len), 3);
    std::fill(sums, sums + 3 * len, 0.0f);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t row = b * S, grow = b * G;
      int64_t s = s0;
      for (; s + L <= s1; s += L) {
        const auto r = cell_backward(load16(grad_h + row + s), load16(grad_cell + row + s), load16(new_cell + row + s),
                                     load16(ig + row + s), load16(og + row + s), load16(cc + row + s),
                                     load16(gw + grow + s), load16(gw + grow + S + s), load16(gw + grow + 2 * S + s));
        store16(d_old_cell + row + s, r.d_cell);
        store16(dg + b * ldd + s, r.d_i);
        store16(dg + b * ldd + S + s, r.d_o);
        store16(dg + b * ldd + 2 * S + s, r.d_z);
        const int64_t u = s - s0;
        store(sums + u, load<FloatVector>(sums + u) + r.d_i);
        store(sums + len + u, load<FloatVector>(sums + len + u) + r.d_o);
        store(sums + 2 * len + u, load<FloatVector>(sums + 2 * len + u) + r.d_z);
      }
      for (; s < s1; ++s) {
        const auto v = [](const uint16_t* p) { return bf16::value(*p); };
        const auto r = cell_backward(v(grad_h + row + s), v(grad_cell + row + s), v(new_cell + row + s), v(ig + row + s),
                                     v(og + row + s), v(cc + row + s), v(gw + grow + s), v(gw + grow + S + s),
                                     v(gw + grow + 2 * S + s));
        d_old_cell[row + s] = bf16::bits_of(r.d_cell);
        dg[b * ldd + s] = bf16::bits_of(r.d_i);
        dg[b * ldd + S + s] = bf16::bits_of(r.d_o);
        dg[b * ldd + 2 * S + s] = bf16::bits_of(r.d_z);
        const int64_t u = s - s0;
        sums[u] += r.d_i;
        sums[len + u] += r.d_o;
        sums[2 * len + u] += r.d_z;
      }
    }
    for (int64_t gate = 0; gate < 3; ++gate) {
      bf16::store_gradient(*args.d_bias, gate * S + s0, sums + gate * len, len, args.accumulate);
      for (int64_t u = 0; u < len; ++u) {
        // This part's rows of dG^T: gate unit i's pairs along the batch.
        const int64_t i = gate * S + s0 + u;
        for (int64_t q = 0; q < b2; ++q)
          dgt[i * b2 + q] = bf16::pair(dg[2 * q * ldd + i], 2 * q + 1 < B ? dg[(2 * q + 1) * ldd + i] : 0);
      }
    }
  });

  // dX = dG W and d_weights = dG^T X, both split over the columns k: each part packs its own panels of W and X.
  const int64_t col_panels = (K + kNR - 1) / kNR;
  const int parts = int(std::min<int64_t>(parts_for(product_work), col_panels));
  parallel(parts, [&](int part, int n_parts) LLTM_BF16_TARGET {
    int64_t p0, p1;
    split_range(col_panels, 1, part, n_parts, p0, p1);
    uint32_t* wp = buffer<uint32_t>(size_t(g2 * kNR), 3);
    uint32_t* xq = buffer<uint32_t>(size_t(b2 * kNR), 4);
    alignas(64) float tile[kMR * kNR];
    const uint32_t* a[kMR];
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t j0 = p * kNR, cols = std::min<int64_t>(kNR, K - j0);
      bf16::pack_rows(W, K, G, K, j0, wp);
      for (int64_t r0 = 0; r0 < B; r0 += kMR) {
        for (int i = 0; i < kMR; ++i) a[i] = reinterpret_cast<const uint32_t*>(dg + std::min(r0 + i, B - 1) * ldd);
        bf16::tile(g2, a, wp, tile, kNR);
        const int64_t in_h = std::max<int64_t>(0, std::min<int64_t>(cols, S - j0));
        for (int64_t i = 0; i < std::min<int64_t>(kMR, B - r0); ++i) {
          const int64_t b = r0 + i;
          if (in_h > 0) bf16::store_row(d_old_h + b * S + j0, tile + i * kNR, in_h, false);
          if (in_h < cols) bf16::store_row(d_input + b * F + j0 + in_h - S, tile + i * kNR + in_h, cols - in_h, false);
        }
      }
      bf16::pack_rows(X, K, B, K, j0, xq);
      for (int64_t r0 = 0; r0 < G; r0 += kMR) {
        for (int i = 0; i < kMR; ++i) a[i] = dgt + std::min(r0 + i, G - 1) * b2;
        bf16::tile(b2, a, xq, tile, kNR);
        for (int64_t i = 0; i < std::min<int64_t>(kMR, G - r0); ++i)
          bf16::store_gradient(*args.d_weights, (r0 + i) * K + j0, tile + i * kNR, cols, args.accumulate);
      }
    }
  });
}

}  // namespace

void run_FORWARD_bf16(const OpCall& call) { forward(forward_args(call)); }
void run_BACKWARD_bf16(const OpCall& call) { backward(backward_args(call)); }

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE

#endif
