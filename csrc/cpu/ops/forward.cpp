// The forward op on the CPU: its kernel, given its argument struct (op_args.h).
#include "../../op_args.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_FORWARD(const OpCall& call) { lltm_forward(forward_args(call), call.compute); }

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
