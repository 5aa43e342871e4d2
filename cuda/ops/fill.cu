// The value is rounded to dst's own dtype once, on the host: the half types
// are filled as they are, without a float32 copy.
#include "math/strided.h"
#include "op_slots.h"
#include "ops/fill.cuh"
#include "runtime/device.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

void op_fill(const OpCall& call, int device) {
  DeviceGuard guard(device);
  strided_fill(*call.tensors[slots::FILL::dst], call.scalars[scalars::FILL::value], state(device).stream);
}

LLTM_CUDA_OP(FILL, op_fill);

}  // namespace lltm::cuda
