#include "ops/stacked_backward.cuh"
#include "ops/stacked_parts.cuh"
#include "runtime/op_registry.h"
#include "stacked_passes.h"

namespace lltm::cuda {

void op_stacked_backward(const OpCall& call, int device) {
  DeviceGuard guard(device);
  StackedParts parts{device};
  stacked_backward(call, parts, "lltm_stacked_backward");
}

LLTM_CUDA_OP(STACKED_BACKWARD, op_stacked_backward);

}  // namespace lltm::cuda
