// The LLTM cell on the CPU: the forward and backward passes, each a GEMM with
// a fused pointwise epilogue, split across the pool's threads.
#include "kernels.h"

#include <cstring>
#include <type_traits>
#include <vector>

#include "../accessor.h"
#include "../dispatch.h"
#include "cell_math.h"
#include "gemm.h"
#include "h_gradient_sum.h"
#include "thread_pool.h"
#include "transpose.h"
#include "vector_math.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

// Vector steps for float32 rows; double rows go one element at a time
// through the C library's functions.
template <typename T>
constexpr int64_t vector_width() {
  return std::is_same<T, float>::value ? Vector<float>::lanes : 1;
}
template <typename T>
using Step = typename std::conditional<std::is_same<T, float>::value, FloatVector, T>::type;

template <typename T>
struct ForwardViews {
  Accessor<const T, 2> gates, old_cell;
  Accessor<T, 2> new_h, new_cell, input_gate, output_gate, candidate_cell;
  int64_t state;
  bool unit() const {
    return gates.strides[1] == 1 && old_cell.strides[1] == 1 && new_h.strides[1] == 1 &&
           new_cell.strides[1] == 1 && input_gate.strides[1] == 1 && output_gate.strides[1] == 1 &&
           candidate_cell.strides[1] == 1;
  }
};

template <typename F, typename T>
inline void forward_unit(const ForwardViews<T>& v, int64_t b, int64_t s) {
  const T* g = v.gates[b].data;
  const auto r = cell_forward(load<F>(g + s), load<F>(g + v.state + s), load<F>(g + 2 * v.state + s),
                              load<F>(v.old_cell[b].data + s));
  store(v.input_gate[b].data + s, r.i);
  store(v.output_gate[b].data + s, r.o);
  store(v.candidate_cell[b].data + s, r.z);
  store(v.new_cell[b].data + s, r.cell);
  store(v.new_h[b].data + s, r.h);
}

template <typename T>
void forward_pointwise(const ForwardViews<T>& v, int64_t s0, int64_t s1) {
  const int64_t B = v.new_h.sizes[0], S = v.state;
  constexpr int64_t W = vector_width<T>();
  if (v.unit()) {
    for (int64_t b = 0; b < B; ++b) {
      int64_t s = s0;
      for (; s + W <= s1; s += W) forward_unit<Step<T>>(v, b, s);
      for (; s < s1; ++s) forward_unit<T>(v, b, s);
    }
    return;
  }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = s0; s < s1; ++s) {
      const auto g = v.gates[b];
      const auto r = cell_forward(g[s], g[S + s], g[2 * S + s], v.old_cell[b][s]);
      v.input_gate[b][s] = r.i;
      v.output_gate[b][s] = r.o;
      v.candidate_cell[b][s] = r.z;
      v.new_cell[b][s] = r.cell;
      v.new_h[b][s] = r.h;
    }
}

// The gate unit (row of W, column of G) of row r of a part's 3 * len rows,
// which are its units [s0, s0 + len) of each gate in turn. It runs for every
// row of every tile, where a division would cost more than the row's stores.
inline int64_t gate_unit(int64_t r, int64_t len, int64_t S, int64_t s0) {
  return r < len ? s0 + r : r < 2 * len ? S + s0 + (r - len) : 2 * S + s0 + (r - 2 * len);
}

// The forward pass's own scratch buffer (gemm.h's scratch, a slot of its own).
struct ForwardScratch;

template <typename T>
void forward(const ForwardArgs& args) {
  const int64_t B = args.n.batch, F = args.n.features, S = args.n.state, K = S + F;
  const auto input = accessor<const T, 2>(*args.input);
  const auto old_h = accessor<const T, 2>(*args.old_h);
  const auto weights = accessor<const T, 2>(*args.weights);
  const auto bias = accessor1<const T>(*args.bias);
  const auto X = accessor<T, 2>(*args.X);
  const auto gates = accessor<T, 2>(*args.gate_weights);

  auto copy_row = [](T* dst, int64_t dst_stride, const T* src, int64_t src_stride, int64_t n) {
    if (dst_stride == 1 && src_stride == 1)
      std::memcpy(dst, src, size_t(n) * sizeof(T));
    else
      for (int64_t k = 0; k < n; ++k) dst[k * dst_stride] = src[k * src_stride];
  };
  for (int64_t b = 0; b < B; ++b) {
    const auto row = X[b];
    copy_row(row.data, row.stride, old_h[b].data, old_h.strides[1], S);
    copy_row(row.data + S * row.stride, row.stride, input[b].data, input.strides[1], F);
  }

  const ForwardViews<T> views{
      accessor<const T, 2>(*args.gate_weights), accessor<const T, 2>(*args.old_cell),
      accessor<T, 2>(*args.new_h),              accessor<T, 2>(*args.new_cell),
      accessor<T, 2>(*args.input_gate),         accessor<T, 2>(*args.output_gate),
      accessor<T, 2>(*args.candidate_cell),     S};

  // The GEMM runs as G^T = W X^T, so that the batch is the vector dimension
  // and W's rows are read in place. Where the batch is one panel (at most two
  // vectors) and there is a whole vector of units (below that the extra
  // scratch buffers cost more than they save: 1x1x1) X^T is laid out once here, rows ldt apart (the batch padded with
  // zeros to whole vectors): that is already the micro-kernel's packed panel,
  // which every part reads in place, so such calls split into pieces the
  // threads claim as they come free. A longer batch is packed from X by each
  // part, in parallel, with one part per thread.
  constexpr int64_t kLanes = Vector<T>::lanes;
  const bool one_panel = B <= 2 * kLanes && S >= kLanes;
  const int64_t ldt = (B + kLanes - 1) / kLanes * kLanes;
  T* x_t = nullptr;
  if (one_panel) {
    x_t = scratch<T, ForwardScratch, 1>(size_t(K) * size_t(ldt), 0);
    transpose(old_h.data, old_h.strides[0], old_h.strides[1], B, S, x_t, ldt, 1);
    transpose(input.data, input.strides[0], input.strides[1], B, F, x_t + S * ldt, ldt, 1);
    if (ldt > B)
      for (int64_t p = 0; p < K; ++p) std::fill(x_t + p * ldt + B, x_t + (p + 1) * ldt, T(0));
  }

  // Each part owns a range of state units, whole vectors of them: it
  // computes the three gates' columns for them and then their pointwise
  // epilogue, with no barrier.
  const int64_t s_grain = kLanes;
  const int64_t units = (S + s_grain - 1) / s_grain;
  const double work = double(B) * 3 * S * K;
  const int parts = one_panel ? pieces_for(work, units) : int(std::min<int64_t>(parts_for(work), units));
  parallel(parts, [&](int part, int n_parts) {
    int64_t s0, s1;
    split_range(S, s_grain, part, n_parts, s0, s1);
    const int64_t len = s1 - s0;
    if (len == 0) return;
    auto row = [&](int64_t r) { return weights.data + gate_unit(r, len, S, s0) * weights.strides[0]; };
    const GemmOperands<T, decltype(row)> op{row, weights.strides[1], one_panel ? x_t : X.data,
                                            one_panel ? ldt : X.strides[1], one_panel ? 1 : X.strides[0]};
    if (!one_panel) {
      // A long batch: each tile's columns go straight to the gates' rows,
      // element by element, which costs little beside the GEMM's long rows
      // (where a scratch G^T would outgrow L2).
      gemm<T>(0, 3 * len, 0, B, K, op,
              [&](int64_t r0, int64_t rows, int64_t j0, int64_t cols, const T* tile, int64_t ld, bool first) {
                int64_t n[kTileRows];
                T add[kTileRows];
                for (int64_t i = 0; i < rows; ++i) {
                  n[i] = gate_unit(r0 + i, len, S, s0);
                  add[i] = first ? bias[n[i]] : T(0);
                }
                for (int64_t jj = 0; jj < cols; ++jj) {
                  const auto g = gates[j0 + jj];
                  for (int64_t i = 0; i < rows; ++i) {
                    T& out = g[n[i]];
                    out = (first ? T(0) : out) + tile[i * ld + jj] + add[i];
                  }
                }
              });
      forward_pointwise(views, s0, s1);
      return;
    }
    // A batch of one panel: the tiles (a row per gate unit, the batch along
    // it) go as they come into a scratch G^T with the bias added; its rows
    // then go to the gates' columns by a blocked transposition.
    T* gates_t = scratch<T>(size_t(3 * len) * size_t(ldt), 1);
    gemm<T>(0, 3 * len, 0, B, K, op,
            [&](int64_t r0, int64_t rows, int64_t j0, int64_t cols, const T* tile, int64_t ld, bool first) {
              for (int64_t i = 0; i < rows; ++i) {
                const int64_t r = r0 + i;
                T* dst = gates_t + r * ldt + j0;
                const T* values = tile + i * ld;
                if (first) {
                  const T add = bias[gate_unit(r, len, S, s0)];
                  for (int64_t jj = 0; jj < cols; ++jj) dst[jj] = values[jj] + add;
                } else {
                  for (int64_t jj = 0; jj < cols; ++jj) dst[jj] += values[jj];
                }
              }
            });
    for (int64_t gate = 0; gate < 3; ++gate)
      transpose(gates_t + gate * len * ldt, ldt, 1, len, B, gates.data + (gate * S + s0) * gates.strides[1],
                gates.strides[0], gates.strides[1]);
    forward_pointwise(views, s0, s1);
  });
}

template <typename T>
struct BackwardViews {
  Accessor<const T, 2> grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, gates;
  Accessor<T, 2> d_old_cell;
  T* d_gates;  // [B, 3S], contiguous scratch
  int64_t state;
  bool unit() const {
    return grad_h.strides[1] == 1 && grad_cell.strides[1] == 1 && new_cell.strides[1] == 1 &&
           input_gate.strides[1] == 1 && output_gate.strides[1] == 1 && candidate_cell.strides[1] == 1 &&
           gates.strides[1] == 1 && d_old_cell.strides[1] == 1;
  }
};

template <typename F, typename T>
inline void backward_unit(const BackwardViews<T>& v, int64_t b, int64_t s) {
  const int64_t S = v.state;
  const auto r = cell_backward(load<F>(v.grad_h[b].data + s), load<F>(v.grad_cell[b].data + s),
                               load<F>(v.new_cell[b].data + s), load<F>(v.input_gate[b].data + s),
                               load<F>(v.output_gate[b].data + s), load<F>(v.candidate_cell[b].data + s),
                               load<F>(v.gates[b].data + s), load<F>(v.gates[b].data + S + s),
                               load<F>(v.gates[b].data + 2 * S + s));
  T* dg = v.d_gates + b * 3 * S;
  store(v.d_old_cell[b].data + s, r.d_cell);
  store(dg + s, r.d_i);
  store(dg + S + s, r.d_o);
  store(dg + 2 * S + s, r.d_z);
}

template <typename T>
void backward_pointwise(const BackwardViews<T>& v, int64_t s0, int64_t s1) {
  const int64_t B = v.grad_h.sizes[0], S = v.state;
  constexpr int64_t W = vector_width<T>();
  if (v.unit()) {
    for (int64_t b = 0; b < B; ++b) {
      int64_t s = s0;
      for (; s + W <= s1; s += W) backward_unit<Step<T>>(v, b, s);
      for (; s < s1; ++s) backward_unit<T>(v, b, s);
    }
    return;
  }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = s0; s < s1; ++s) {
      const auto g = v.gates[b];
      const auto r = cell_backward(v.grad_h[b][s], v.grad_cell[b][s], v.new_cell[b][s], v.input_gate[b][s],
                                   v.output_gate[b][s], v.candidate_cell[b][s], g[s], g[S + s], g[2 * S + s]);
      T* dg = v.d_gates + b * 3 * S;
      v.d_old_cell[b][s] = r.d_cell;
      dg[s] = r.d_i;
      dg[S + s] = r.d_o;
      dg[2 * S + s] = r.d_z;
    }
}

template <typename T>
void backward(const BackwardArgs& given) {
  BackwardArgs args = given;
  std::vector<T> h_gradient;
  lltm_tensor h_gradient_view;
  join_h_gradients(args, h_gradient, h_gradient_view, [](T v) { return v; }, [](T v) { return v; });
  const int64_t B = args.n.batch, S = args.n.state, F = args.n.features, K = S + F;
  T* d_gates = scratch<T>(size_t(B) * 3 * size_t(S), 1);
  const BackwardViews<T> views{
      accessor<const T, 2>(*args.grad_h),      accessor<const T, 2>(*args.grad_cell),
      accessor<const T, 2>(*args.new_cell),    accessor<const T, 2>(*args.input_gate),
      accessor<const T, 2>(*args.output_gate), accessor<const T, 2>(*args.candidate_cell),
      accessor<const T, 2>(*args.gate_weights), accessor<T, 2>(*args.d_old_cell),
      d_gates,                                 S};
  const auto d_bias = accessor1<T>(*args.d_bias);

  // The pointwise pass is split as the products after it are: it runs on
  // the same helpers moments before them, which that split wakes anyway.
  // Sized alone it looked too small to split (four exponentials an element
  // are 2 ns of one core, ~4 us at 16x32x128) and ran on the caller alone:
  // split, the AVX2 backward there took 20.5 us against 22.4.
  const int64_t G = 3 * S;
  const int64_t s_grain = 16;
  const int64_t k_grain = Vector<T>::lanes;
  const double product_work = 2.0 * B * G * K;
  const int pointwise_parts = std::min<int64_t>(parts_for(product_work), (S + s_grain - 1) / s_grain);
  parallel(pointwise_parts, [&](int part, int n_parts) {
    int64_t s0, s1;
    split_range(S, s_grain, part, n_parts, s0, s1);
    backward_pointwise(views, s0, s1);
    for (int64_t gate = 0; gate < 3; ++gate) {
      const int64_t n0 = gate * S + s0, count = s1 - s0;
      store_row(&d_bias[n0], d_bias.stride, d_gates + n0, count, !args.accumulate);
      for (int64_t b = 1; b < B; ++b) store_row(&d_bias[n0], d_bias.stride, d_gates + b * 3 * S + n0, count, false);
    }
  });

  const auto X = accessor<const T, 2>(*args.X);
  const auto weights = accessor<const T, 2>(*args.weights);
  const auto d_weights = accessor<T, 2>(*args.d_weights);
  const auto d_old_h = accessor<T, 2>(*args.d_old_h);
  const auto d_input = accessor<T, 2>(*args.d_input);

  // d_weights = dG^T X splits over its rows and dX = dG W over its columns
  // (which go to d_old_h for k < S, to d_input beyond), so that no two parts
  // write to the same cache line of a row-major output.
  const int parts = std::min<int64_t>(parts_for(product_work), (K + k_grain - 1) / k_grain);
  parallel(parts, [&](int part, int n_parts) {
    int64_t k0, k1, n0, n1;
    split_range(K, k_grain, part, n_parts, k0, k1);
    split_range(G, kTileRows, part, n_parts, n0, n1);
    auto gate_column = [&](int64_t n) { return static_cast<const T*>(d_gates + n); };
    const GemmOperands<T, decltype(gate_column)> dw{gate_column, G, X.data, X.strides[0], X.strides[1]};
    auto store_dw = [&](int64_t i0, int64_t rows, int64_t k, int64_t count, const T* tile, int64_t ld, bool first) {
      for (int64_t i = 0; i < rows; ++i) {
        const auto row = d_weights[i0 + i];
        store_row(&row[k], row.stride, tile + i * ld, count, first && !args.accumulate);
      }
    };
    if (n0 < n1)
      gemm<T>(n0, n1, 0, K, B, dw, store_dw, d_weights.strides[1] == 1 ? d_weights.data : nullptr,
              d_weights.strides[0], args.accumulate);
    auto gate_row = [&](int64_t b) { return static_cast<const T*>(d_gates + b * G); };
    const GemmOperands<T, decltype(gate_row)> dx{gate_row, 1, weights.data, weights.strides[0],
                                                 weights.strides[1]};
    if (k0 < k1)
      gemm<T>(0, B, k0, k1, G, dx,
              [&](int64_t b0, int64_t rows, int64_t k, int64_t count, const T* tile, int64_t ld, bool first) {
                const int64_t in_h = std::max<int64_t>(0, std::min(count, S - k));
                for (int64_t i = 0; i < rows; ++i) {
                  const auto h_row = d_old_h[b0 + i], x_row = d_input[b0 + i];
                  const T* values = tile + i * ld;
                  if (in_h > 0) store_row(&h_row[k], h_row.stride, values, in_h, first);
                  if (in_h < count) store_row(&x_row[k + in_h - S], x_row.stride, values + in_h, count - in_h, first);
                }
              });
  });
}

}  // namespace

void lltm_forward(const ForwardArgs& args, int32_t dtype) {
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_forward", [&] { forward<scalar_t>(args); });
}

void lltm_backward(const BackwardArgs& args, int32_t dtype) {
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_backward", [&] { backward<scalar_t>(args); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
