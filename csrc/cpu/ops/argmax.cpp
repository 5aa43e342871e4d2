// The argmax op on the CPU: each row's first largest element, a NaN counting as largest (as torch.argmax).
#include <cmath>

#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void argmax(const OpCall& call) {
  namespace s = slots::ARGMAX;
  const lltm_tensor &x = *call.tensors[s::x], &out = *call.tensors[s::indices];
  const int64_t N = call.size('N'), V = call.size('V');
  for (int64_t n = 0; n < N; ++n) {
    const T* row = static_cast<const T*>(x.data) + n * x.strides[0];
    int64_t best = 0;
    for (int64_t v = 1; v < V && !std::isnan(row[best * x.strides[1]]); ++v) {
      const T value = row[v * x.strides[1]];
      if (std::isnan(value) || value > row[best * x.strides[1]]) best = v;
    }
    static_cast<int32_t*>(out.data)[n * out.strides[0]] = int32_t(best);
  }
}

}  // namespace

void run_ARGMAX(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_argmax", [&] { argmax<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
