// The axpy op on the CPU: y += alpha * x (elementwise_cpu.cpp).
#include "../../op_slots.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_AXPY(const OpCall& call) {
  namespace s = slots::AXPY;
  axpy(*call.tensors[s::y], call.scalars[scalars::AXPY::alpha], *call.tensors[s::x], call.compute);
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
