// The embedding op on the CPU: every id checked first, so that a bad one
// leaves y untouched, then y's rows copied from weight's.
#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../../ops/refusals.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void embedding(const OpCall& call) {
  namespace s = slots::EMBEDDING;
  const lltm_tensor &w = *call.tensors[s::weight], &ids = *call.tensors[s::ids], &y = *call.tensors[s::y];
  const int64_t N = call.size('N'), V = call.size('V'), D = call.size('D');
  const int32_t* id = static_cast<const int32_t*>(ids.data);
  ops::check_indices("lltm_embedding", "ids", ids, N, {V, false, 0});
  const T* wd = static_cast<const T*>(w.data);
  T* yd = static_cast<T*>(y.data);
  for (int64_t n = 0; n < N; ++n) {
    const T* row = wd + id[n * ids.strides[0]] * w.strides[0];
    T* out = yd + n * y.strides[0];
    for (int64_t d = 0; d < D; ++d) out[d * y.strides[1]] = row[d * w.strides[1]];
  }
}

}  // namespace

void run_EMBEDDING(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_embedding", [&] { embedding<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
