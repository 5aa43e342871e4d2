#include "ops/stacked_forward.cuh"
#include "ops/stacked_parts.cuh"
#include "runtime/op_registry.h"
#include "stacked_passes.h"

namespace lltm::cuda {

void op_stacked_forward(const OpCall& call, int device) {
  DeviceGuard guard(device);
  StackedParts parts{device};
  stacked_forward(call, parts, "lltm_stacked_forward");
}

LLTM_CUDA_OP(STACKED_FORWARD, op_stacked_forward);

}  // namespace lltm::cuda
