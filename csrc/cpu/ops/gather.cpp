// The gather op on the CPU: every index checked first, so that a bad one
// leaves out untouched, then out[o, q, i] = x[o, index[o, q, i], i] element
// by element in the elements' own size (float or int32 alike).
#include "../../op_slots.h"
#include "../../ops/dtypes.h"
#include "../../ops/refusals.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename E>
void gather(const OpCall& call) {
  namespace s = slots::GATHER;
  const lltm_tensor &x = *call.tensors[s::x], &index = *call.tensors[s::index], &out = *call.tensors[s::out];
  const int64_t O = call.size('O'), P = call.size('P'), Q = call.size('Q'), I = call.size('I');
  ops::check_indices("lltm_gather", "index", ops::flat_indices(index, O * Q * I), O * Q * I, {P, false, 0});
  const int32_t* id = static_cast<const int32_t*>(index.data);  // contiguous [O, Q, I]
  const E* xd = static_cast<const E*>(x.data);
  E* od = static_cast<E*>(out.data);
  for (int64_t o = 0; o < O; ++o)
    for (int64_t q = 0; q < Q; ++q)
      for (int64_t i = 0; i < I; ++i)
        od[o * out.strides[0] + q * out.strides[1] + i * out.strides[2]] =
            xd[o * x.strides[0] + id[(o * Q + q) * I + i] * x.strides[1] + i * x.strides[2]];
}

}  // namespace

void run_GATHER(const OpCall& call) {
  // Every tensor has call.compute's type (the library staged other floats), so the element size says all.
  if (kDtypes[call.compute].bytes == 8)
    gather<uint64_t>(call);
  else
    gather<uint32_t>(call);
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
