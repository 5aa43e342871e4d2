// The stacked ops' parts on the CPU (stacked_passes.h): each layer through
// this kernel set's own sequence kernels, scratch from the CPU's allocator.
#pragma once

#include "../../op_call.h"
#include "../kernels.h"
#include "../lltm_cpu.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

struct StackedParts {
  void run(const OpCall& part) {
    if (part.op == LLTM_OP_SEQUENCE_FORWARD)
      run_SEQUENCE_FORWARD(part);
    else
      run_SEQUENCE_BACKWARD(part);
  }
  void* alloc(uint64_t bytes) { return cpu::alloc(bytes); }
  void free(void* data) { cpu::free(data); }
};

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
