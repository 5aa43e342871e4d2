// The reverse_steps op on the CPU: each sample's steps reversed within its
// length, a strided row copy per (step, sample); every length is checked
// before anything is written.
#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../kernels.h"
#include "../sequence_lengths.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_REVERSE_STEPS(const OpCall& call) {
  namespace s = slots::REVERSE_STEPS;
  const lltm_tensor &x = *call.tensors[s::x], &y = *call.tensors[s::y];
  const int64_t T = call.size('T'), B = call.size('B'), X = call.size('X');
  const Lengths lengths(call.tensors[s::lengths], T, "lltm_reverse_steps");
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_reverse_steps", [&] {
    for (int64_t b = 0; b < B; ++b) {
      const int64_t n = lengths[b];
      for (int64_t t = 0; t < T; ++t) {
        const int64_t step = t < n ? n - 1 - t : t;
        const scalar_t* from = static_cast<const scalar_t*>(x.data) + step * x.strides[0] + b * x.strides[1];
        scalar_t* to = static_cast<scalar_t*>(y.data) + t * y.strides[0] + b * y.strides[1];
        for (int64_t e = 0; e < X; ++e) to[e * y.strides[2]] = from[e * x.strides[2]];
      }
    }
  });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
