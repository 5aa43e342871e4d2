#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {
// Constant-initialised, so registrations from other files' static
// initialisers find it ready whatever their order.
OpRunner registered[LLTM_OP_END];
bool half[LLTM_OP_END];
}  // namespace

OpRunner op_runner(int32_t op) { return op > 0 && op < LLTM_OP_END ? registered[op] : nullptr; }

bool op_takes_half(int32_t op) { return op > 0 && op < LLTM_OP_END && half[op]; }

RegisterOp::RegisterOp(int32_t op, OpRunner run, bool takes_half) {
  registered[op] = run;
  half[op] = takes_half;
}

}  // namespace lltm::cuda
