// The linear op on the CPU: y = x Wᵀ + bias, one GEMM (gemm.h) whose tiles
// take the bias on their way out; any strides.
#include <algorithm>

#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../gemm.h"
#include "../kernels.h"
#include "../thread_pool.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void linear(const OpCall& call) {
  namespace s = slots::LINEAR;
  const lltm_tensor &x = *call.tensors[s::x], &w = *call.tensors[s::weight], &y = *call.tensors[s::y];
  const lltm_tensor* bias = call.tensors[s::bias];
  const int64_t N = call.size('N'), K = call.size('K'), M = call.size('M');
  const T* xd = static_cast<const T*>(x.data);
  T* yd = static_cast<T*>(y.data);
  const T* bd = bias != nullptr ? static_cast<const T*>(bias->data) : nullptr;
  const int64_t bs = bias != nullptr ? bias->strides[0] : 0;
  // C = y: A(i, p) = x[i, p], B(p, j) = W[j, p]; parts split y's columns.
  auto row = [&](int64_t i) { return xd + i * x.strides[0]; };
  const GemmOperands<T, decltype(row)> op{row, x.strides[1], static_cast<const T*>(w.data), w.strides[1],
                                          w.strides[0]};
  const int64_t grain = Vector<T>::lanes;
  const int parts = std::min<int64_t>(parts_for(double(N) * M * K), (M + grain - 1) / grain);
  parallel(parts, [&](int part, int n_parts) {
    int64_t j0, j1;
    split_range(M, grain, part, n_parts, j0, j1);
    if (j0 == j1) return;
    gemm<T>(0, N, j0, j1, K, op,
            [&](int64_t i0, int64_t rows, int64_t jt, int64_t cols, const T* tile, int64_t ld, bool first) {
              for (int64_t i = 0; i < rows; ++i) {
                T* out = yd + (i0 + i) * y.strides[0] + jt * y.strides[1];
                const T* values = tile + i * ld;
                for (int64_t j = 0; j < cols; ++j) {
                  const T add = first && bd != nullptr ? bd[(jt + j) * bs] : T(0);
                  T& o = out[j * y.strides[1]];
                  o = (first ? T(0) : o) + values[j] + add;
                }
              }
            });
  });
}

}  // namespace

void run_LINEAR(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_linear", [&] { linear<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
