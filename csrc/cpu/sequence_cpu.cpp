// Whole sequences on the CPU (lltm_sequence_forward / _backward).
//
// Forward: the input half of every step's gate sums, x_t W_x^T + b, is one
// GEMM over all T*B rows before the loop; each step then adds only the
// recurrent half h_{t-1} W_h^T and runs the cell's pointwise math on the
// product's registers-fresh tile. W_h^T is packed once per call into panels
// of NR state units per gate, so a step packs nothing: a part owns a range of
// panels (the same units in all three gates) and computes, for its units,
// the gates, the new cell and the new h with no barrier inside the step.
//
// Backward: a step's only product is the recurrent one, dh_{t-1} = dG_t W_h,
// split over the same panels, with the pointwise gradient of step t-1 fused
// onto it. The gate gradients of all steps are kept, so that d_inputs
// (dG W_x) and d_weights (dG^T [h_{t-1}, x_t]) are each one GEMM over T*B
// rows after the loop.
//
// Reserve layout (CPU's own): per step and row, the factors of the gate
// gradients [3S] (z sigma'(g0), tanh(c) sigma'(g1), i elu'(g2)), the slope
// of h through the cell [S] (o tanh'(c)), and h_t [S]: T*B*5S elements.
// The forward forms them where it has the gates, so the backward loop is a
// product and a few multiplications per step, with no transcendental
// function.
//
// Per-sample lengths: sample b's steps from lengths[b] on keep its state
// (h and c carried, so the last state is that of its own last step), write
// zero outputs, and keep zero factors; the backward gives those steps zero
// gate gradients and adds grad_last_h at the sample's own last step.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include "../accessor.h"
#include "../dispatch.h"
#include "denormals.h"
#include "gemm.h"
#include "kernels.h"
#include "lltm_cpu.h"
#include "sequence_lengths.h"
#include "sequence_units.h"
#include "thread_pool.h"
#include "vector_math.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

// The engine's scratch buffers (gemm.h's scratch, in slots of its own).
enum Slot { kPacked, kGates, kState, kStaged, kSums, kSlots };
struct EngineScratch;

template <typename T>
T* engine_buffer(Slot slot, size_t count) {
  return scratch<T, EngineScratch, kSlots>(count, slot);
}

// float rows go a vector at a time, double rows an element at a time
// (the C library's functions, for float64's accuracy).
template <typename T>
using Lane = typename std::conditional<std::is_same<T, float>::value, FloatVector, T>::type;
template <typename T>
constexpr int64_t lane_width() {
  return std::is_same<T, float>::value ? Vector<float>::lanes : 1;
}

template <typename F, typename T>
inline void store_gate_gradients(T* dg, int64_t S, const GateGradients<F>& d) {
  store(dg, d.i);
  store(dg + S, d.o);
  store(dg + 2 * S, d.z);
}

// The recurrent product of mr <= kTileRows rows against one packed panel,
// with the fewest micro-kernel rows that cover them: a batch below the tile
// height (inference of one sequence, say) is not padded to a full tile.
template <typename T, int NV>
inline void panel_product(int64_t mr, int64_t kc, const T* const* rows, int64_t aps, const T* panel, T* tile) {
  constexpr int NR = NV * Vector<T>::lanes;
  if (mr <= 1)
    micro_kernel<T, 1, NV, true>(kc, rows, aps, panel, NR, tile, NR, false);
  else if (mr <= 2)
    micro_kernel<T, 2, NV, true>(kc, rows, aps, panel, NR, tile, NR, false);
  else if (mr <= 4)
    micro_kernel<T, 4, NV, true>(kc, rows, aps, panel, NR, tile, NR, false);
  else
    micro_kernel<T, kTileRows, NV, true>(kc, rows, aps, panel, NR, tile, NR, false);
}

// Rows [b0, b0 + mr) of a row-major [B, *] block `base` with row stride ld,
// as the micro-kernel's row pointers (rows past the edge repeat the last).
template <typename T>
inline void row_pointers(const T** rows, const T* base, int64_t ld, int64_t b0, int64_t mr) {
  for (int i = 0; i < kTileRows; ++i) rows[i] = base + (b0 + std::min<int64_t>(i, mr - 1)) * ld;
}

// Names the engine in a failure of its copies (cpu::copy).
constexpr const char* kEngine = "the CPU sequence engine";

// A [B,S] argument to or from the engine's own contiguous rows.
template <typename T>
void copy_rows(const lltm_tensor& dst, const T* src) {
  copy(dst, contiguous_like(dst, const_cast<T*>(src)), kEngine);
}

template <typename T>
void gather_rows(T* dst, const lltm_tensor& src) {
  copy(contiguous_like(src, dst), src, kEngine);
}

// The sizes of one call's tiling: NR units per panel, Q panels.
template <typename T, int NV>
struct Tiling {
  static constexpr int MR = kTileRows;
  static constexpr int NR = NV * Vector<T>::lanes;
  int64_t T_, B, F, S, G, Q, SP;  // SP = Q * NR, the units padded to whole panels
  explicit Tiling(const SequenceSizes& n)
      : T_(n.steps), B(n.batch), F(n.features), S(n.state), G(3 * n.state), Q((n.state + NR - 1) / NR),
        SP(Q * NR) {}
};

template <typename T, int NV, bool Keep>
void forward(const SequenceForwardArgs& a) {
  const Tiling<T, NV> k(a.n);
  constexpr int MR = Tiling<T, NV>::MR, NR = Tiling<T, NV>::NR;
  const int64_t steps = k.T_, B = k.B, F = k.F, S = k.S, G = k.G;
  const auto W = accessor<const T, 2>(*a.weights);
  const auto bias = accessor1<const T>(*a.bias);
  const auto x = accessor<const T, 3>(*a.inputs);
  const auto out = accessor<T, 3>(*a.outputs);
  const Lengths length(a.lengths, steps, "lltm_sequence_forward");
  constexpr bool training = Keep;

  // Training keeps the gate factors where the input sums were (each unit's
  // own part overwrites them in place); inference projects a chunk of steps
  // at a time into a buffer of about a megabyte.
  T* const factors_all = static_cast<T*>(a.reserve);
  T* const slope_all = training ? factors_all + steps * B * G : nullptr;
  T* const h_all = training ? slope_all + steps * B * S : nullptr;
  const int64_t chunk = training ? steps : std::clamp<int64_t>((int64_t(1) << 18) / (B * G), 1, steps);
  T* const packed = engine_buffer<T>(kPacked, size_t(3 * S * k.SP));
  T* const gx_chunk = training ? factors_all : engine_buffer<T>(kGates, size_t(chunk * B * G));
  T* const state = engine_buffer<T>(kState, size_t(3 * B * S));
  T* const cell = state;                             // c, carried in place
  T* const h_ring[2] = {state + B * S, state + 2 * B * S};  // h_{t-1} and h_t when not kept in the reserve
  gather_rows(cell, *a.c0);

  // Input sums of steps [t0, t1) into rows of `gx`; with `pack`, also W_h^T
  // into panels: gate g's panel q holds rows k of W[g*S + q*NR + j, k].
  auto project = [&](int64_t t0, int64_t t1, T* gx, bool pack) {
    const int64_t rows = (t1 - t0) * B;
    // The GEMM's work last: the pool sizes its wake-ups by the latest parts_for of this thread.
    const int pack_parts = pack ? parts_for(double(G) * S) : 1;
    const int parts = std::max(parts_for(double(rows) * G * F), pack_parts);
    parallel_flushed(parts, [&](int part, int n_parts) {
      if (pack) {
        int64_t q0, q1;
        split_range(k.Q, 1, part, n_parts, q0, q1);
        for (int64_t g = 0; g < 3 && q0 < q1; ++g) {
          const int64_t u0 = q0 * NR, u1 = std::min(q1 * NR, S);
          pack_b<T, NR>(S, u1 - u0, W.data + (g * S + u0) * W.strides[0], W.strides[1], W.strides[0],
                        packed + g * S * k.SP + q0 * S * NR);
        }
      }
      int64_t m0, m1;
      split_range(rows, MR, part, n_parts, m0, m1);
      if (m0 >= m1) return;
      auto row = [&](int64_t r) { return x.data + (t0 + r / B) * x.strides[0] + (r % B) * x.strides[1]; };
      const GemmOperands<T, decltype(row)> op{row, x.strides[2], W.data + S * W.strides[1], W.strides[1],
                                              W.strides[0]};
      gemm<T>(m0, m1, 0, G, F, op,
              [&](int64_t r0, int64_t n_rows, int64_t j0, int64_t cols, const T* tile, int64_t ld, bool first) {
                for (int64_t i = 0; i < n_rows; ++i) {
                  T* dst = gx + (r0 + i) * G + j0;
                  const T* values = tile + i * ld;
                  if (first)
                    for (int64_t j = 0; j < cols; ++j) dst[j] = values[j] + bias[j0 + j];
                  else
                    for (int64_t j = 0; j < cols; ++j) dst[j] += values[j];
                }
              });
    });
  };

  // Asked before every step, as the pool sizes its wake-ups by this thread's latest parts_for
  // (and expect_work: the steps still to come, which run back to back).
  const double step_work = double(B) * G * S;
  for (int64_t t = 0; t < steps; ++t) {
    if (t % chunk == 0) project(t, std::min(t + chunk, steps), gx_chunk, t == 0);
    const int step_parts = std::min<int64_t>(parts_for(step_work), k.Q);
    expect_work(step_work * double(steps - t));
    T* const gx = gx_chunk + (t % chunk) * B * G;
    const T* h_prev = t == 0 ? nullptr : training ? h_all + (t - 1) * B * S : h_ring[(t - 1) & 1];
    T* const h_next = training ? h_all + t * B * S : h_ring[t & 1];
    T* const slope = training ? slope_all + t * B * S : nullptr;
    parallel_flushed(step_parts, [&](int part, int n_parts) {
      int64_t q0, q1;
      split_range(k.Q, 1, part, n_parts, q0, q1);
      alignas(64) T tile[3][MR * NR];
      const T* rows[MR];
      for (int64_t b0 = 0; b0 < B; b0 += MR) {
        const int64_t mr = std::min<int64_t>(MR, B - b0);
        if (h_prev == nullptr)
          for (int i = 0; i < MR; ++i)
            rows[i] = static_cast<const T*>(a.h0->data) + (b0 + std::min<int64_t>(i, mr - 1)) * a.h0->strides[0];
        else
          row_pointers(rows, h_prev, S, b0, mr);
        const int64_t aps = h_prev == nullptr ? a.h0->strides[1] : 1;
        for (int64_t q = q0; q < q1; ++q) {
          for (int g = 0; g < 3; ++g)
            panel_product<T, NV>(mr, S, rows, aps, packed + g * S * k.SP + q * S * NR, tile[g]);
          const int64_t u0 = q * NR, nr = std::min<int64_t>(NR, S - u0);
          constexpr int64_t L = lane_width<T>();
          for (int64_t i = 0; i < mr; ++i) {
            const int64_t b = b0 + i, o = b * S + u0;
            const int64_t og = b * G + u0;
            const auto dst = out[t][b];
            if (t >= length[b]) {
              // Past the sample's length (so t >= 1): the state carried, the output and the factors zero.
              std::memcpy(h_next + o, h_prev + o, size_t(nr) * sizeof(T));
              for (int64_t j = 0; j < nr; ++j) dst[u0 + j] = T(0);
              if (Keep) {
                for (int g = 0; g < 3; ++g) std::fill(gx + og + g * S, gx + og + g * S + nr, T(0));
                std::fill(slope + o, slope + o + nr, T(0));
              }
              continue;
            }
            int64_t u = 0;
            for (; u + L <= nr; u += L)
              forward_unit<Keep, Lane<T>>(tile[0] + i * NR + u, tile[1] + i * NR + u, tile[2] + i * NR + u,
                                          gx + og + u, S, cell + o + u, h_next + o + u, Keep ? slope + o + u : nullptr);
            for (; u < nr; ++u)
              forward_unit<Keep, T>(tile[0] + i * NR + u, tile[1] + i * NR + u, tile[2] + i * NR + u, gx + og + u,
                                    S, cell + o + u, h_next + o + u, Keep ? slope + o + u : nullptr);
            if (dst.stride == 1)
              std::memcpy(&dst[u0], h_next + o, size_t(nr) * sizeof(T));
            else
              for (int64_t j = 0; j < nr; ++j) dst[u0 + j] = h_next[o + j];
          }
        }
      }
    });
  }
  copy_rows(*a.last_h, training ? h_all + (steps - 1) * B * S : h_ring[(steps - 1) & 1]);
  copy_rows(*a.last_cell, cell);
}

template <typename T, int NV>
void backward(const SequenceBackwardArgs& a) {
  const Tiling<T, NV> k(a.n);
  constexpr int MR = Tiling<T, NV>::MR, NR = Tiling<T, NV>::NR;
  const int64_t steps = k.T_, B = k.B, F = k.F, S = k.S, G = k.G, rows_all = steps * B;
  const auto W = accessor<const T, 2>(*a.weights);
  const auto x = accessor<const T, 3>(*a.inputs);
  const T* const factors_all = static_cast<const T*>(a.reserve);
  const T* const slope_all = factors_all + rows_all * G;
  const T* const h_all = slope_all + rows_all * S;
  const Lengths length(a.lengths, steps, "lltm_sequence_backward");

  // W_h as panels of NR columns (state units) over all 3S rows.
  T* const packed = engine_buffer<T>(kPacked, size_t(G * k.SP));
  T* const d_gates = engine_buffer<T>(kGates, size_t(rows_all * G));
  T* const dc = engine_buffer<T>(kState, size_t(B * S));
  if (a.grad_last_cell != nullptr)
    gather_rows(dc, *a.grad_last_cell);
  else
    std::fill(dc, dc + B * S, T(0));

  // dh_{t} for the part's rows and units: the recurrent product of step
  // t+1's gate gradients (none after the last step) plus the given gradients
  // (grad_last_h at each sample's own last step).
  auto recurrent = [&](int64_t t, int64_t b0, int64_t mr, int64_t q, const T* const* rows, T* tile) {
    const int64_t u0 = q * NR, nr = std::min<int64_t>(NR, S - u0);
    if (t + 1 < steps)
      panel_product<T, NV>(mr, G, rows, 1, packed + q * G * NR, tile);
    else
      std::fill(tile, tile + MR * NR, T(0));
    for (int64_t i = 0; i < mr; ++i) {
      T* r = tile + i * NR;
      if (a.grad_outputs != nullptr) {
        const auto g = accessor<const T, 3>(*a.grad_outputs)[t][b0 + i];
        for (int64_t j = 0; j < nr; ++j) r[j] += g[u0 + j];
      }
      if (t == length[b0 + i] - 1 && a.grad_last_h != nullptr) {
        const auto g = accessor<const T, 2>(*a.grad_last_h)[b0 + i];
        for (int64_t j = 0; j < nr; ++j) r[j] += g[u0 + j];
      }
    }
  };

  parallel_flushed(parts_for(double(G) * S), [&](int part, int n_parts) {
    int64_t q0, q1;
    split_range(k.Q, 1, part, n_parts, q0, q1);
    if (q0 < q1)
      pack_b<T, NR>(G, std::min(q1 * NR, S) - q0 * NR, W.data + q0 * NR * W.strides[1], W.strides[0], W.strides[1],
                    packed + q0 * G * NR);
  });
  // Asked before every step, as the pool sizes its wake-ups by this thread's latest parts_for
  // (and expect_work: the steps still to come, which run back to back).
  const double step_work = double(B) * G * S;
  for (int64_t t = steps - 1; t >= 0; --t) {
    const T* const factors = factors_all + t * B * G;
    const T* const slope = slope_all + t * B * S;
    T* const dg = d_gates + t * B * G;
    const int step_parts = std::min<int64_t>(parts_for(step_work), k.Q);
    expect_work(step_work * double(t + 1));
    parallel_flushed(step_parts, [&](int part, int n_parts) {
      int64_t q0, q1;
      split_range(k.Q, 1, part, n_parts, q0, q1);
      alignas(64) T tile[MR * NR];
      const T* rows[MR];
      for (int64_t b0 = 0; b0 < B; b0 += MR) {
        const int64_t mr = std::min<int64_t>(MR, B - b0);
        if (t + 1 < steps) row_pointers<T>(rows, dg + B * G, G, b0, mr);
        for (int64_t q = q0; q < q1; ++q) {
          recurrent(t, b0, mr, q, rows, tile);
          const int64_t u0 = q * NR, nr = std::min<int64_t>(NR, S - u0);
          constexpr int64_t L = lane_width<T>();
          for (int64_t i = 0; i < mr; ++i) {
            const int64_t b = b0 + i, o = b * S + u0, og = b * G + u0;
            if (t >= length[b]) {
              // Past the sample's length: no gate gradient, the cell's gradient carried unchanged.
              for (int g = 0; g < 3; ++g) std::fill(dg + og + g * S, dg + og + g * S + nr, T(0));
              continue;
            }
            int64_t u = 0;
            for (; u + L <= nr; u += L)
              store_gate_gradients(dg + og + u, S,
                                   backward_unit(load<Lane<T>>(tile + i * NR + u), factors + og + u, slope + o + u, S,
                                                 dc + o + u));
            for (; u < nr; ++u)
              store_gate_gradients(dg + og + u, S,
                                   backward_unit(tile[i * NR + u], factors + og + u, slope + o + u, S, dc + o + u));
          }
        }
      }
    });
  }

  // After the loop: d_h0 (step 0's recurrent product), d_c0, and the two
  // products over all T*B rows, d_inputs = dG W_x and d_weights = dG^T X
  // with X = [h_{t-1}, x_t], split as d_weights is by rows, d_inputs by rows
  // and d_h0 by panels, so that no two parts write one output row.
  copy_rows(*a.d_c0, dc);
  // X's input half as one [T*B, F] matrix: in place where the steps' rows
  // are evenly spaced, else gathered.
  const T* xin = x.data;
  int64_t x_row = x.strides[1];
  if (B == 1) {
    x_row = x.strides[0];
  } else if (x.strides[0] != B * x.strides[1]) {
    T* staged = engine_buffer<T>(kStaged, size_t(rows_all * F));
    lltm_tensor flat = *a.inputs;
    flat.data = staged;
    flat.strides[0] = B * F;
    flat.strides[1] = F;
    flat.strides[2] = 1;
    copy(flat, *a.inputs, kEngine);
    xin = staged;
    x_row = F;
  }
  const int64_t x_col = xin == x.data ? x.strides[2] : 1;
  const auto d_weights = accessor<T, 2>(*a.d_weights);
  const auto d_bias = accessor1<T>(*a.d_bias);
  const bool want_inputs = a.d_inputs != nullptr;
  const auto d_inputs = want_inputs ? accessor<T, 3>(*a.d_inputs) : Accessor<T, 3>{};
  const auto d_h0 = accessor<T, 2>(*a.d_h0);
  const auto h0 = accessor<const T, 2>(*a.h0);
  const bool accumulate = a.accumulate;
  const int parts = parts_for(double(rows_all) * G * (2 * S + 2 * F));
  parallel_flushed(parts, [&](int part, int n_parts) {
    int64_t n0, n1, m0, m1, q0, q1;
    split_range(G, MR, part, n_parts, n0, n1);
    split_range(rows_all, MR, part, n_parts, m0, m1);
    split_range(k.Q, 1, part, n_parts, q0, q1);
    if (n0 < n1) {
      // d_weights rows n: columns [0, S) from h_{t-1} (h0, then the reserve's
      // h_1..h_{T-1}), columns [S, S+F) from x; d_bias[n] sums dG's column n.
      auto column = [&](int64_t n) { return static_cast<const T*>(d_gates + n); };
      auto store_to = [&](int64_t c0, bool overwrite) {
        return [&, c0, overwrite](int64_t i0, int64_t rows, int64_t j0, int64_t cols, const T* tile, int64_t ld,
                                  bool first) {
          for (int64_t i = 0; i < rows; ++i) {
            const auto row = d_weights[i0 + i];
            store_row(&row[c0 + j0], row.stride, tile + i * ld, cols, first && overwrite);
          }
        };
      };
      const GemmOperands<T, decltype(column)> first_step{column, G, h0.data, h0.strides[0], h0.strides[1]};
      gemm<T>(n0, n1, 0, S, B, first_step, store_to(0, !accumulate));
      if (steps > 1) {
        auto later = [&](int64_t n) { return static_cast<const T*>(d_gates + B * G + n); };
        const GemmOperands<T, decltype(later)> rest{later, G, h_all, S, 1};
        gemm<T>(n0, n1, 0, S, rows_all - B, rest, store_to(0, false));
      }
      const GemmOperands<T, decltype(column)> inputs{column, G, xin, x_row, x_col};
      gemm<T>(n0, n1, 0, F, rows_all, inputs, store_to(S, !accumulate));
      // Row by row, so that dG is read in order (this part's own buffer: parts may share a thread).
      T* sums = engine_buffer<T>(kSums, size_t(n1 - n0));
      std::fill(sums, sums + (n1 - n0), T(0));
      for (int64_t r = 0; r < rows_all; ++r) {
        const T* row = d_gates + r * G + n0;
        for (int64_t j = 0; j < n1 - n0; ++j) sums[j] += row[j];
      }
      for (int64_t n = n0; n < n1; ++n) d_bias[n] = accumulate ? d_bias[n] + sums[n - n0] : sums[n - n0];
    }
    if (want_inputs && m0 < m1) {
      auto row = [&](int64_t r) { return static_cast<const T*>(d_gates + r * G); };
      const GemmOperands<T, decltype(row)> op{row, 1, W.data + S * W.strides[1], W.strides[0], W.strides[1]};
      gemm<T>(m0, m1, 0, F, G, op,
              [&](int64_t r0, int64_t n_rows, int64_t j0, int64_t cols, const T* tile, int64_t ld, bool first) {
                for (int64_t i = 0; i < n_rows; ++i) {
                  const auto dst = d_inputs[(r0 + i) / B][(r0 + i) % B];
                  store_row(&dst[j0], dst.stride, tile + i * ld, cols, first);
                }
              });
    }
    alignas(64) T tile[MR * NR];
    const T* rows[MR];
    for (int64_t b0 = 0; b0 < B && q0 < q1; b0 += MR) {
      const int64_t mr = std::min<int64_t>(MR, B - b0);
      row_pointers<T>(rows, d_gates, G, b0, mr);
      for (int64_t q = q0; q < q1; ++q) {
        panel_product<T, NV>(mr, G, rows, 1, packed + q * G * NR, tile);
        const int64_t u0 = q * NR, nr = std::min<int64_t>(NR, S - u0);
        for (int64_t i = 0; i < mr; ++i) {
          const auto dst = d_h0[b0 + i];
          for (int64_t j = 0; j < nr; ++j) dst[u0 + j] = tile[i * NR + j];
        }
      }
    }
  });
}

// Panels of one vector where the state is that narrow, two otherwise.
template <typename T>
bool narrow_panels(const SequenceSizes& n) {
  return n.state <= Vector<T>::lanes;
}

}  // namespace

void lltm_sequence_forward(const SequenceForwardArgs& args, int32_t dtype) {
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_sequence_forward", [&] {
    const bool narrow = narrow_panels<scalar_t>(args.n), keep = args.reserve != nullptr;
    if (narrow)
      keep ? forward<scalar_t, 1, true>(args) : forward<scalar_t, 1, false>(args);
    else
      keep ? forward<scalar_t, 2, true>(args) : forward<scalar_t, 2, false>(args);
  });
}

void lltm_sequence_backward(const SequenceBackwardArgs& args, int32_t dtype) {
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_sequence_backward", [&] {
    if (narrow_panels<scalar_t>(args.n))
      backward<scalar_t, 1>(args);
    else
      backward<scalar_t, 2>(args);
  });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
