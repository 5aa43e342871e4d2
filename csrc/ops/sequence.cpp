// The sequence ops' own checks: the engines' buffers must fit, and a training
// call's reserve (the BYTES slot) must hold what the sizes need.
#include <string>

#include "lltm_args.h"
#include "op_slots.h"
#include "ops/hooks.h"
#include "status.h"

namespace lltm::ops {

namespace {

SequenceSizes sizes_of(const OpCall& c) { return {c.size('T'), c.size('B'), c.size('F'), c.size('S')}; }

uint64_t reserve_bytes(const OpCall& c, const char* fn) { return sequence_reserve_bytes(sizes_of(c), c.compute, fn); }

// Inputs may be broadcast views (stride 0), so their sizes alone do not
// bound the engines' buffers: the reserve's size and the weights' element
// count must fit, which bounds every product of sizes a backend forms.
void check_engine_sizes(const Checking& c) {
  const SequenceSizes n = sizes_of(c.call);
  reserve_bytes(c.call, c.fn);
  int64_t weights = 3 * element_size(c.call.compute);
  if (__builtin_mul_overflow(weights, n.state, &weights) || __builtin_mul_overflow(weights, n.state + n.features, &weights))
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(c.fn) + ": weights of S = " + std::to_string(n.state) + ", F = " +
                                        std::to_string(n.features) + " (3S*(S+F) elements) do not fit in 63 bits");
}

// The sizes the reserve's messages give.
std::string reserve_sizes(const OpCall& c) {
  const SequenceSizes n = sizes_of(c);
  return "T = " + std::to_string(n.steps) + ", B = " + std::to_string(n.batch) + ", S = " + std::to_string(n.state);
}

void check_reserve(Checking& c, int slot) {
  ops::check_reserve(c, slot, reserve_bytes(c.call, c.fn), reserve_sizes(c.call), "lltm_sequence_reserve_bytes");
}

void check_forward(Checking& c) {
  check_engine_sizes(c);
  if ((c.call.flags & LLTM_SEQUENCE_TRAINING) != 0)
    check_reserve(c, slots::SEQUENCE_FORWARD::reserve);
  else
    c.call.tensors[slots::SEQUENCE_FORWARD::reserve] = nullptr;
}

void check_backward(Checking& c) {
  check_engine_sizes(c);
  check_reserve(c, slots::SEQUENCE_BACKWARD::reserve);
}

}  // namespace

LLTM_OP_HOOKS(SEQUENCE_FORWARD, check_forward, reserve_bytes);
LLTM_OP_HOOKS(SEQUENCE_BACKWARD, check_backward, reserve_bytes);

}  // namespace lltm::ops
