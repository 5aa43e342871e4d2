// The softmax op on the CPU: each row's exp(x - max) over their sum.
#include <cmath>

#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void softmax(const OpCall& call) {
  namespace s = slots::SOFTMAX;
  const lltm_tensor &x = *call.tensors[s::x], &y = *call.tensors[s::y];
  const int64_t N = call.size('N'), V = call.size('V');
  for (int64_t n = 0; n < N; ++n) {
    const T* row = static_cast<const T*>(x.data) + n * x.strides[0];
    T* out = static_cast<T*>(y.data) + n * y.strides[0];
    T max = row[0];
    for (int64_t v = 1; v < V; ++v) max = std::fmax(max, row[v * x.strides[1]]);
    T sum = 0;
    for (int64_t v = 0; v < V; ++v) sum += std::exp(row[v * x.strides[1]] - max);
    // y may not overlap x, so the exponentials are taken again rather than kept in y between the passes.
    for (int64_t v = 0; v < V; ++v) out[v * y.strides[1]] = std::exp(row[v * x.strides[1]] - max) / sum;
  }
}

}  // namespace

void run_SOFTMAX(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_softmax", [&] { softmax<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
