#include "op_args.h"
#include "ops/sequence_forward.cuh"
#include "runtime/op_registry.h"
#include "sequence/engine.h"

namespace lltm::cuda {

void op_sequence_forward(const OpCall& call, int device) {
  sequence_forward(sequence_forward_args(call), call.compute, call.float32_matmul_precision, device);
}

LLTM_CUDA_HALF_OP(SEQUENCE_FORWARD, op_sequence_forward);

}  // namespace lltm::cuda
