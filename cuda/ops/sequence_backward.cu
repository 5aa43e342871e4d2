#include "op_args.h"
#include "ops/sequence_backward.cuh"
#include "sequence/engine.h"

namespace lltm::cuda {

void op_sequence_backward(const OpCall& call, int device) {
  sequence_backward(sequence_backward_args(call), call.compute, device);
}

}  // namespace lltm::cuda
