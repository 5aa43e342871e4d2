// cross_entropy's backward on the CPU: every target checked first, then
// d_logits = (softmax(row) - onehot(target)) * the row's gradient.
#include <cmath>
#include <string>

#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../../ops/refusals.h"
#include "../kernels.h"

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
  for (int64_t n = 0; n < N; ++n) {
    const int64_t target = t[n * targets.strides[0]];
    const T* row = xd + n * x.strides[0];
    T* out = dd + n * dx.strides[0];
    const T g = target == ignore ? T(0)
                : reduction == 0 ? static_cast<const T*>(g_losses->data)[n * g_losses->strides[0]]
                : reduction == 1 ? T(double(g_all) / double(count))
                                 : g_all;
    if (target == ignore) {
      for (int64_t v = 0; v < V; ++v) out[v * dx.strides[1]] = T(0);
      continue;
    }
    T max = row[0];
    for (int64_t v = 1; v < V; ++v) max = std::fmax(max, row[v * x.strides[1]]);
    T exps = 0;
    for (int64_t v = 0; v < V; ++v) exps += std::exp(row[v * x.strides[1]] - max);
    for (int64_t v = 0; v < V; ++v)
      out[v * dx.strides[1]] = (std::exp(row[v * x.strides[1]] - max) / exps - T(v == target)) * g;
  }
}

}  // namespace

void run_CROSS_ENTROPY_BACKWARD(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_cross_entropy_backward",
                               [&] { cross_entropy_backward<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
