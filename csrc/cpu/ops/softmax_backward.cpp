// softmax's backward on the CPU: d_x = y * (grad_y - the row's sum of grad_y * y).
#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void softmax_backward(const OpCall& call) {
  namespace s = slots::SOFTMAX_BACKWARD;
  const lltm_tensor &y = *call.tensors[s::y], &g = *call.tensors[s::grad_y], &dx = *call.tensors[s::d_x];
  const int64_t N = call.size('N'), V = call.size('V');
  for (int64_t n = 0; n < N; ++n) {
    const T* yr = static_cast<const T*>(y.data) + n * y.strides[0];
    const T* gr = static_cast<const T*>(g.data) + n * g.strides[0];
    T* out = static_cast<T*>(dx.data) + n * dx.strides[0];
    T dot = 0;
    for (int64_t v = 0; v < V; ++v) dot += yr[v * y.strides[1]] * gr[v * g.strides[1]];
    for (int64_t v = 0; v < V; ++v) out[v * dx.strides[1]] = yr[v * y.strides[1]] * (gr[v * g.strides[1]] - dot);
  }
}

}  // namespace

void run_SOFTMAX_BACKWARD(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_softmax_backward", [&] { softmax_backward<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
