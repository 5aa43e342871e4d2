// The stacked ops' own checks: params (and d_params) hold exactly the
// layers' and directions' parts in stacked_layout.h's layout, and a training
// call's reserve holds each one's reserve and the outputs between layers.
#include <string>

#include "op_slots.h"
#include "ops/hooks.h"
#include "stacked_layout.h"
#include "status.h"

namespace lltm::ops {

namespace {

// The stacked call's layout; the reserve's size checked to fit in 64 bits.
StackedLayout layout_of(const OpCall& c, int align_scalar, const char* fn) {
  const StackedLayout at = StackedLayout::of(c, int64_t(c.scalars[align_scalar]), fn);
  if (!at.reserve_fits())
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": the reserve of L = " + std::to_string(at.layers) +
                                        " layers in D = " + std::to_string(at.directions) +
                                        " directions does not fit in 64 bits");
  return at;
}

std::string reserve_sizes(const StackedLayout& at) {
  return "L = " + std::to_string(at.layers) + ", D = " + std::to_string(at.directions) + ", T = " +
         std::to_string(at.steps) + ", B = " + std::to_string(at.batch) + ", S = " + std::to_string(at.state);
}

// params, 1-D, holds exactly the layers' and directions' parts (the declaration checks that it is contiguous).
void check_params(const Checking& c, int slot, const StackedLayout& at) {
  const lltm_tensor& p = *c.call.tensors[slot];
  const int64_t need = at.params();
  if (p.ndim != 1 || p.sizes[0] != need)
    fail(LLTM_ERR_SHAPE_MISMATCH,
         std::string(c.fn) + ": 'params' has shape " + shape_string(p) + "; L = " + std::to_string(at.layers) +
             " layers in D = " + std::to_string(at.directions) + " directions of S = " + std::to_string(at.state) +
             " on F = " + std::to_string(at.features) +
             " features, each part at a multiple of align = " + std::to_string(at.align) + " elements, take [" +
             std::to_string(need) + "]");
}

template <int kAlign>
uint64_t reserve_bytes(const OpCall& c, const char* fn) {
  return layout_of(c, kAlign, fn).reserve_bytes();
}

void check_forward(Checking& c) {
  namespace s = slots::STACKED_FORWARD;
  const StackedLayout at = layout_of(c.call, scalars::STACKED_FORWARD::align, c.fn);
  check_params(c, s::params, at);
  if ((c.call.flags & LLTM_SEQUENCE_TRAINING) != 0)
    check_reserve(c, s::reserve, at.reserve_bytes(), reserve_sizes(at), "lltm_buffer_bytes");
  else
    c.call.tensors[s::reserve] = nullptr;
}

void check_backward(Checking& c) {
  namespace s = slots::STACKED_BACKWARD;
  const StackedLayout at = layout_of(c.call, scalars::STACKED_BACKWARD::align, c.fn);
  check_params(c, s::params, at);
  check_reserve(c, s::reserve, at.reserve_bytes(), reserve_sizes(at), "lltm_buffer_bytes");
}

}  // namespace

LLTM_OP_HOOKS(STACKED_FORWARD, check_forward, reserve_bytes<scalars::STACKED_FORWARD::align>);
LLTM_OP_HOOKS(STACKED_BACKWARD, check_backward, reserve_bytes<scalars::STACKED_BACKWARD::align>);

}  // namespace lltm::ops
