// The stacked_forward op on the CPU: a sequence forward per layer (stacked_passes.h).
#include "../../stacked_passes.h"
#include "stacked_parts.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_STACKED_FORWARD(const OpCall& call) {
  StackedParts parts;
  stacked_forward(call, parts, "lltm_stacked_forward");
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
