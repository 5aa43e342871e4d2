// The stacked ops' parts on CUDA (stacked_passes.h): each layer through the
// sequence engine's op, scratch from the device's pool, a lane a layer where
// the layers run as a wavefront.
#pragma once

#include <algorithm>

#include "op_call.h"
#include "runtime/device.h"
#include "runtime/kernel_choice.h"
#include "runtime/lanes.h"
#include "runtime/memory_pool.h"
#include "runtime/op_registry.h"
#include "sequence/engine.h"
#include "stacked_layout.h"

namespace lltm::cuda {

struct StackedParts {
  int device;
  void run(const OpCall& part) { op_runner(part.op)(part, device); }
  void* alloc(uint64_t bytes) { return cuda::alloc(bytes, device); }
  void free(void* data) { cuda::free(data, device); }
  // A wavefront where the device holds every layer's recurrence in clusters at once (stacked_wavefront.h), at
  // the call's precision (exact float32 products run elsewhere at these sizes, where chunks only add launches):
  // a backward must run at its forward's precision to make the same choice (lltm_ops.def).
  int64_t wavefront_chunks(const OpCall& c, const StackedLayout& at) const;
  // Both directions at once where the device holds both recurrences' clusters together (LLTM_CUDA_KERNELS=
  // directions-at-once forces it, for tests); the reserve's layout does not depend on it.
  bool directions_at_once(const OpCall& c, const StackedLayout& at) const {
    return forced("directions-at-once") ||
           clustered_recurrence_copies(c.compute, c.float32_matmul_precision, at.state, at.batch) >= 2;
  }
  // A lane a layer (layers kMaxLanes apart share one: a wait then also waits for the other's later work).
  class Lanes {
   public:
    Lanes(StackedParts& parts, int count) : lanes_(parts.device, std::min(count, cuda::Lanes::kMaxLanes)) {}
    void use(int layer) { lanes_.use(layer % cuda::Lanes::kMaxLanes); }
    void signal(int layer) { lanes_.signal(layer % cuda::Lanes::kMaxLanes); }
    void wait(int layer, int on) { lanes_.wait(layer % cuda::Lanes::kMaxLanes, on % cuda::Lanes::kMaxLanes); }

   private:
    cuda::Lanes lanes_;
  };
};

// Chunks of a wavefront where it runs: the layers overlap in all but one chunk's time (K + L - 1 chunks' time
// instead of K L), against a launch and a load of the recurrent weights a chunk.
constexpr int64_t kWavefrontChunks = 4;

inline int64_t StackedParts::wavefront_chunks(const OpCall& c, const StackedLayout& at) const {
  const int64_t at_once = std::min<int64_t>(at.layers, cuda::Lanes::kMaxLanes);
  return clustered_recurrence_copies(c.compute, c.float32_matmul_precision, at.state, at.batch) >= at_once
             ? kWavefrontChunks
             : 1;
}

}  // namespace lltm::cuda
