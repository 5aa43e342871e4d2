#include "math/strided.h"
#include "op_slots.h"
#include "ops/axpy.cuh"
#include "runtime/device.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

void op_axpy(const OpCall& call, int device) {
  DeviceGuard guard(device);
  strided_axpy(*call.tensors[slots::AXPY::y], call.scalars[scalars::AXPY::alpha], *call.tensors[slots::AXPY::x],
               call.compute, state(device).stream);
}

LLTM_CUDA_OP(AXPY, op_axpy);

}  // namespace lltm::cuda
