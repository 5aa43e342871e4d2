// The multinomial op on the CPU: every row's weights checked first, then one
// index per row drawn by the generator the CUDA kernel shares (counter_rng.h).
#include <cmath>

#include "../../counter_rng.h"
#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../../ops/refusals.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void multinomial(const OpCall& call) {
  namespace s = slots::MULTINOMIAL;
  namespace k = scalars::MULTINOMIAL;
  const lltm_tensor &p = *call.tensors[s::probs], &out = *call.tensors[s::indices];
  const int64_t N = call.size('N'), V = call.size('V');
  const uint64_t seed = uint64_t(call.scalars[k::seed]), offset = uint64_t(call.scalars[k::offset]);
  const auto total_of = [&](int64_t n) {
    const T* row = static_cast<const T*>(p.data) + n * p.strides[0];
    double total = 0;
    bool bad = false;
    for (int64_t v = 0; v < V; ++v) {
      const double w = double(row[v * p.strides[1]]);
      bad = bad || !(w >= 0) || std::isinf(w);
      total += w;
    }
    if (bad || std::isinf(total)) ops::refuse_weights("lltm_multinomial", "probs", n, true);
    if (!(total > 0)) ops::refuse_weights("lltm_multinomial", "probs", n, false);
    return total;
  };
  for (int64_t n = 0; n < N; ++n) total_of(n);
  for (int64_t n = 0; n < N; ++n) {
    const T* row = static_cast<const T*>(p.data) + n * p.strides[0];
    const auto at = [&](int64_t v) { return row[v * p.strides[1]]; };
    static_cast<int32_t*>(out.data)[n * out.strides[0]] =
        draw_index(at, V, total_of(n), uniform01(seed, offset, uint64_t(n)));
  }
}

}  // namespace

void run_MULTINOMIAL(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_multinomial", [&] { multinomial<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
