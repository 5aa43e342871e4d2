// gather's backward on the CPU: every index checked first, then d_x zeroed
// (unless accumulating) and grad_out's elements added into the positions
// the indices name, q in order, so that the sums are the same run after run.
#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../../ops/refusals.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void gather_backward(const OpCall& call) {
  namespace s = slots::GATHER_BACKWARD;
  const lltm_tensor &g = *call.tensors[s::grad_out], &index = *call.tensors[s::index], &dx = *call.tensors[s::d_x];
  const int64_t O = call.size('O'), P = call.size('P'), Q = call.size('Q'), I = call.size('I');
  ops::check_indices("lltm_gather_backward", "index", ops::flat_indices(index, O * Q * I), O * Q * I, {P, false, 0});
  const int32_t* id = static_cast<const int32_t*>(index.data);  // contiguous [O, Q, I]
  const T* gd = static_cast<const T*>(g.data);
  T* dd = static_cast<T*>(dx.data);
  for (int64_t o = 0; o < O; ++o) {
    if ((call.flags & LLTM_ACCUMULATE_PARAM_GRADS) == 0)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t i = 0; i < I; ++i) dd[o * dx.strides[0] + p * dx.strides[1] + i * dx.strides[2]] = T(0);
    for (int64_t q = 0; q < Q; ++q)
      for (int64_t i = 0; i < I; ++i)
        dd[o * dx.strides[0] + id[(o * Q + q) * I + i] * dx.strides[1] + i * dx.strides[2]] +=
            gd[o * g.strides[0] + q * g.strides[1] + i * g.strides[2]];
  }
}

}  // namespace

void run_GATHER_BACKWARD(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_gather_backward", [&] { gather_backward<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
