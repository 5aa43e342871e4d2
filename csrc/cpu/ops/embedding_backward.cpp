// embedding's backward on the CPU: every id checked first, then d_weight
// zeroed (unless accumulating) and grad_y's rows added into the rows the
// ids name, in order, so that the sums are the same run after run.
#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../../ops/refusals.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void embedding_backward(const OpCall& call) {
  namespace s = slots::EMBEDDING_BACKWARD;
  const lltm_tensor &g = *call.tensors[s::grad_y], &ids = *call.tensors[s::ids], &dw = *call.tensors[s::d_weight];
  const int64_t N = call.size('N'), V = call.size('V'), D = call.size('D');
  const int32_t* id = static_cast<const int32_t*>(ids.data);
  ops::check_indices("lltm_embedding_backward", "ids", ids, N, {V, false, 0});
  T* dwd = static_cast<T*>(dw.data);
  const T* gd = static_cast<const T*>(g.data);
  if ((call.flags & LLTM_ACCUMULATE_PARAM_GRADS) == 0)
    for (int64_t v = 0; v < V; ++v)
      for (int64_t d = 0; d < D; ++d) dwd[v * dw.strides[0] + d * dw.strides[1]] = T(0);
  for (int64_t n = 0; n < N; ++n) {
    T* row = dwd + id[n * ids.strides[0]] * dw.strides[0];
    const T* in = gd + n * g.strides[0];
    for (int64_t d = 0; d < D; ++d) row[d * dw.strides[1]] += in[d * g.strides[1]];
  }
}

}  // namespace

void run_EMBEDDING_BACKWARD(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_embedding_backward", [&] { embedding_backward<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
