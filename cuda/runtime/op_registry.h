// The backend's kernels by op id: each op's file (ops/<op>.cu) registers its
// entry with LLTM_CUDA_OP, so that adding an op of lltm_ops.def adds its
// file and touches no shared one (the CPU's kernel table does the same from
// run_<ID> names).
#pragma once

#include <cstdint>

#include "op_call.h"

namespace lltm::cuda {

// Runs a validated call on `device`; throws lltm::Error.
using OpRunner = void (*)(const OpCall& call, int device);

// The op's registered runner, or nullptr.
OpRunner op_runner(int32_t op);

// Whether the op's runner takes calls whose FLOAT tensors are all of one
// half type as they are (OpCall.compute is then that type), rather than
// staged through float32.
bool op_takes_half(int32_t op);

struct RegisterOp {
  RegisterOp(int32_t op, OpRunner run, bool takes_half);
};

}  // namespace lltm::cuda

#define LLTM_CUDA_OP(ID, run) \
  static const ::lltm::cuda::RegisterOp register_op_##ID(LLTM_OP_##ID, run, false)

// An op whose runner also computes in bfloat16 and float16 (op_takes_half).
#define LLTM_CUDA_HALF_OP(ID, run) \
  static const ::lltm::cuda::RegisterOp register_op_##ID(LLTM_OP_##ID, run, true)
