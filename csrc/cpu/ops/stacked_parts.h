// The stacked ops' parts on the CPU (stacked_passes.h): each layer and
// direction through this kernel set's own sequence kernels (and its
// reverse_steps and axpy), scratch from the CPU's allocator.
#pragma once

#include <string>

#include "../../op_call.h"
#include "../../stacked_layout.h"
#include "../../status.h"
#include "../kernels.h"
#include "../lltm_cpu.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

struct StackedParts {
  void run(const OpCall& part) {
    switch (part.op) {
      case LLTM_OP_SEQUENCE_FORWARD: return run_SEQUENCE_FORWARD(part);
      case LLTM_OP_SEQUENCE_BACKWARD: return run_SEQUENCE_BACKWARD(part);
      case LLTM_OP_REVERSE_STEPS: return run_REVERSE_STEPS(part);
      case LLTM_OP_AXPY: return run_AXPY(part);
    }
    fail(LLTM_ERR_INTERNAL, "the stacked ops ran a part of op " + std::to_string(part.op) + ", which they never make");
  }
  void* alloc(uint64_t bytes) { return cpu::alloc(bytes); }
  void free(void* data) { cpu::free(data); }
  // The layers and directions share the cores whatever their order: no wavefront unless LLTM_STACKED_CHUNKS asks
  // for one, the directions one after the other, and the parts in the order they come.
  int64_t wavefront_chunks(const OpCall&, const StackedLayout&) const { return 1; }
  bool directions_at_once(const OpCall&, const StackedLayout&) const { return false; }
  struct Lanes {
    Lanes(StackedParts&, int) {}
    void use(int) {}
    void signal(int) {}
    void wait(int, int) {}
  };
};

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
