// The cat op on the CPU: out[o, :P, i] = a[o, :, i] and out[o, P:, i] = b[o, :, i],
// element by element in the elements' own size (float or int32 alike).
#include "../../op_slots.h"
#include "../../ops/dtypes.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename E>
void join(const OpCall& call) {
  namespace s = slots::CAT;
  const lltm_tensor &a = *call.tensors[s::a], &b = *call.tensors[s::b], &out = *call.tensors[s::out];
  const int64_t O = call.size('O'), P = call.size('P'), Q = call.size('Q'), I = call.size('I');
  E* od = static_cast<E*>(out.data);
  for (int64_t o = 0; o < O; ++o)
    for (int64_t m = 0; m < P + Q; ++m) {
      const lltm_tensor& src = m < P ? a : b;
      const E* sd = static_cast<const E*>(src.data) + o * src.strides[0] + (m < P ? m : m - P) * src.strides[1];
      E* d = od + o * out.strides[0] + m * out.strides[1];
      for (int64_t i = 0; i < I; ++i) d[i * out.strides[2]] = sd[i * src.strides[2]];
    }
}

}  // namespace

void run_CAT(const OpCall& call) {
  // Every tensor has call.compute's type (the library staged other floats), so the element size says all.
  if (kDtypes[call.compute].bytes == 8)
    join<uint64_t>(call);
  else
    join<uint32_t>(call);
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
