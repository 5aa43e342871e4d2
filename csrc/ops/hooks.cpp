#include "ops/hooks.h"

namespace lltm::ops {

namespace {
// Constant-initialised, so registrations from other files' static
// initialisers find it ready whatever their order.
OpHooks registered[LLTM_OP_END];
}  // namespace

const OpHooks& op_hooks(int32_t op) { return registered[op]; }

RegisterHooks::RegisterHooks(int32_t op, OpHooks hooks) { registered[op] = hooks; }

}  // namespace lltm::ops
