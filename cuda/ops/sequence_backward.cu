#include "op_args.h"
#include "ops/sequence_backward.cuh"
#include "runtime/op_registry.h"
#include "sequence/engine.h"

namespace lltm::cuda {

void op_sequence_backward(const OpCall& call, int device) {
  sequence_backward(sequence_backward_args(call), call.compute, call.float32_matmul_precision, device);
}

LLTM_CUDA_HALF_OP(SEQUENCE_BACKWARD, op_sequence_backward);

}  // namespace lltm::cuda
