// sum_squares on the device: total (+)= the sum of x's squares (math/reduce.cuh, in double).
#include "dispatch.h"
#include "math/reduce.cuh"
#include "op_slots.h"
#include "ops/sum_squares.cuh"
#include "runtime/op_registry.h"

namespace lltm::cuda {

void op_sum_squares(const OpCall& call, int device) {
  namespace s = slots::SUM_SQUARES;
  DeviceGuard guard(device);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_sum_squares", [&] {
    reduce_into<scalar_t, true>(*call.tensors[s::x], static_cast<scalar_t*>(call.tensors[s::total]->data), 1.0,
                                (call.flags & LLTM_ACCUMULATE_PARAM_GRADS) != 0, state(device).stream);
  });
}

LLTM_CUDA_OP(SUM_SQUARES, op_sum_squares);

}  // namespace lltm::cuda
