// sum on the device: total = scale * the sum of x's elements (math/reduce.cuh, in double).
#include "dispatch.h"
#include "math/reduce.cuh"
#include "op_slots.h"
#include "ops/sum.cuh"
#include "runtime/op_registry.h"

namespace lltm::cuda {

void op_sum(const OpCall& call, int device) {
  namespace s = slots::SUM;
  DeviceGuard guard(device);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_sum", [&] {
    reduce_into<scalar_t, false>(*call.tensors[s::x], static_cast<scalar_t*>(call.tensors[s::total]->data),
                                 call.scalars[scalars::SUM::scale], false, state(device).stream);
  });
}

LLTM_CUDA_OP(SUM, op_sum);

}  // namespace lltm::cuda
