// The stacked ops' parts on CUDA (stacked_passes.h): each layer through the
// sequence engine's op, scratch from the device's pool.
#pragma once

#include "op_call.h"
#include "runtime/device.h"
#include "runtime/memory_pool.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

struct StackedParts {
  int device;
  void run(const OpCall& part) { op_runner(part.op)(part, device); }
  void* alloc(uint64_t bytes) { return cuda::alloc(bytes, device); }
  void free(void* data) { cuda::free(data, device); }
};

}  // namespace lltm::cuda
