// linear's backward on the CPU: d_x = grad_y W, d_weight = grad_yᵀ x and
// d_bias = the column sums of grad_y (the last two added to their contents
// under LLTM_ACCUMULATE_PARAM_GRADS), each where asked for; any strides.
#include <algorithm>

#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../gemm.h"
#include "../kernels.h"
#include "../thread_pool.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void linear_backward(const OpCall& call) {
  namespace s = slots::LINEAR_BACKWARD;
  const lltm_tensor &gy = *call.tensors[s::grad_y], &x = *call.tensors[s::x], &w = *call.tensors[s::weight];
  const lltm_tensor *d_x = call.tensors[s::d_x], *d_w = call.tensors[s::d_weight], *d_b = call.tensors[s::d_bias];
  const bool accumulate = (call.flags & LLTM_ACCUMULATE_PARAM_GRADS) != 0;
  const int64_t N = call.size('N'), M = call.size('M'), K = call.size('K');
  const T* g = static_cast<const T*>(gy.data);
  const T* xd = static_cast<const T*>(x.data);
  const int64_t grain = Vector<T>::lanes;
  const double work = 2.0 * N * M * K;
  // d_weight and d_bias split over their rows, d_x over its columns, so that
  // no two parts write to one element.
  const int64_t splits = std::max((M + kTileRows - 1) / kTileRows, (K + grain - 1) / grain);
  const int parts = int(std::min<int64_t>(parts_for(work), splits));
  parallel(parts, [&](int part, int n_parts) {
    int64_t m0, m1, k0, k1;
    split_range(M, kTileRows, part, n_parts, m0, m1);
    split_range(K, grain, part, n_parts, k0, k1);
    if (d_b != nullptr) {
      T* db = static_cast<T*>(d_b->data);
      for (int64_t m = m0; m < m1; ++m) {
        T sum = 0;
        for (int64_t n = 0; n < N; ++n) sum += g[n * gy.strides[0] + m * gy.strides[1]];
        T& out = db[m * d_b->strides[0]];
        out = accumulate ? out + sum : sum;
      }
    }
    if (d_w != nullptr && m0 < m1) {
      // C = d_weight: A(i, p) = grad_y[p, i], B(p, j) = x[p, j].
      T* dw = static_cast<T*>(d_w->data);
      auto column = [&](int64_t i) { return g + i * gy.strides[1]; };
      const GemmOperands<T, decltype(column)> op{column, gy.strides[0], xd, x.strides[0], x.strides[1]};
      gemm<T>(m0, m1, 0, K, N, op,
              [&](int64_t i0, int64_t rows, int64_t j, int64_t cols, const T* tile, int64_t ld, bool first) {
                for (int64_t i = 0; i < rows; ++i)
                  store_row(dw + (i0 + i) * d_w->strides[0] + j * d_w->strides[1], d_w->strides[1], tile + i * ld,
                            cols, first && !accumulate);
              },
              d_w->strides[1] == 1 ? dw : nullptr, d_w->strides[0], accumulate);
    }
    if (d_x != nullptr && k0 < k1) {
      // C = d_x: A(i, p) = grad_y[i, p], B(p, j) = W[p, j].
      T* dx = static_cast<T*>(d_x->data);
      auto row = [&](int64_t i) { return g + i * gy.strides[0]; };
      const GemmOperands<T, decltype(row)> op{row, gy.strides[1], static_cast<const T*>(w.data), w.strides[0],
                                              w.strides[1]};
      gemm<T>(0, N, k0, k1, M, op,
              [&](int64_t i0, int64_t rows, int64_t j, int64_t cols, const T* tile, int64_t ld, bool first) {
                for (int64_t i = 0; i < rows; ++i)
                  store_row(dx + (i0 + i) * d_x->strides[0] + j * d_x->strides[1], d_x->strides[1], tile + i * ld,
                            cols, first);
              });
    }
  });
}

}  // namespace

void run_LINEAR_BACKWARD(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_linear_backward", [&] { linear_backward<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
