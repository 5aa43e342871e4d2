// The stacked_backward op on the CPU: a sequence backward per layer, the last first (stacked_passes.h).
#include "../../stacked_passes.h"
#include "stacked_parts.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_STACKED_BACKWARD(const OpCall& call) {
  StackedParts parts;
  stacked_backward(call, parts, "lltm_stacked_backward");
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
