// cross_entropy's backward on the CPU: every target checked first, then
// d_logits = (softmax(row) - onehot(target)) * the row's gradient, the rows
// split between threads (d_logits never overlaps the logits, so a row's
// exponentials are kept in it between the two passes).
#include <cmath>
#include <string>

#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../../ops/refusals.h"
#include "../kernels.h"
#include "../thread_pool.h"
#include "row_exps.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void cross_entropy_backward(const OpCall& call) {
  namespace s = slots::CROSS_ENTROPY_BACKWARD;
  namespace k = scalars::CROSS_ENTROPY_BACKWARD;
  const lltm_tensor &x = *call.tensors[s::logits], &targets = *call.tensors[s::targets], &dx = *call.tensors[s::d_logits];
  const lltm_tensor *g_losses = call.tensors[s::grad_losses], *g_total = call.tensors[s::grad_total];
  const int64_t N = call.size('N'), V = call.size('V');
  const int64_t reduction = int64_t(call.scalars[k::reduction]), ignore = int64_t(call.scalars[k::ignore_index]);
  const int32_t* t = static_cast<const int32_t*>(targets.data);
  int64_t count = 0;
  ops::check_indices("lltm_cross_entropy_backward", "targets", targets, N, {V, true, ignore});
  for (int64_t n = 0; n < N; ++n) count += t[n * targets.strides[0]] != ignore;
  const T* xd = static_cast<const T*>(x.data);
  T* dd = static_cast<T*>(dx.data);
  const T g_all = reduction == 0 ? T(0) : *static_cast<const T*>(g_total->data);
  // Every counted row's gradient under "mean" and "sum"; per row under "none".
  const T g_row = reduction == 1 ? T(double(g_all) / double(count)) : g_all;
  // An exponential costs about as much as 16 multiply-adds.
  parallel(parts_for(double(N) * double(V) * 16), [&](int part, int parts) {
    int64_t n0, n1;
    split_range(N, 1, part, parts, n0, n1);
    for (int64_t n = n0; n < n1; ++n) {
      const int64_t target = t[n * targets.strides[0]];
      T* out = dd + n * dx.strides[0];
      if (target == ignore) {
        for (int64_t v = 0; v < V; ++v) out[v * dx.strides[1]] = T(0);
        continue;
      }
      const T g = reduction == 0 ? static_cast<const T*>(g_losses->data)[n * g_losses->strides[0]] : g_row;
      const RowExps<T> e = row_exps(xd + n * x.strides[0], x.strides[1], V, out, dx.strides[1]);
      for (int64_t v = 0; v < V; ++v) out[v * dx.strides[1]] = (out[v * dx.strides[1]] / e.sum - T(v == target)) * g;
    }
  });
}

}  // namespace

void run_CROSS_ENTROPY_BACKWARD(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_cross_entropy_backward",
                               [&] { cross_entropy_backward<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
