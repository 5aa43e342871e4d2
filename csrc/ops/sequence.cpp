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

// The reserve: present, a 1-D buffer of at least the bytes the sizes need,
// which are its span for the overlap check.
void check_reserve(Checking& c, int slot) {
  const SequenceSizes n = sizes_of(c.call);
  const uint64_t need = reserve_bytes(c.call, c.fn);
  const lltm_tensor* t = (c.given.given >> slot & 1u) != 0 ? &c.given.tensors[slot] : nullptr;
  if (t == nullptr || t->data == nullptr)
    fail(LLTM_ERR_NULL_POINTER, std::string(c.fn) + ": 'reserve' is a null pointer; training needs " +
                                    std::to_string(need) + " bytes (lltm_sequence_reserve_bytes)");
  if (t->ndim != 1 || (t->sizes[0] > 1 && t->strides[0] != 1))
    fail(LLTM_ERR_INVALID_SHAPE, std::string(c.fn) + ": 'reserve' must be a contiguous 1-D buffer of bytes, got " +
                                     shape_string(*t) + " with stride " + std::to_string(t->strides[0]));
  if (t->sizes[0] < 0 || uint64_t(t->sizes[0]) < need)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(c.fn) + ": " +
                                        (c.typed ? "'reserve_bytes' is " + std::to_string(t->sizes[0])
                                                 : "'reserve' has " + std::to_string(t->sizes[0]) + " bytes") +
                                        " but T = " + std::to_string(n.steps) + ", B = " + std::to_string(n.batch) +
                                        ", S = " + std::to_string(n.state) + " needs " + std::to_string(need) +
                                        " (lltm_sequence_reserve_bytes)");
  const uintptr_t begin = reinterpret_cast<uintptr_t>(t->data);
  if (begin > UINTPTR_MAX - need)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(c.fn) + ": 'reserve' spans past the end of the address space");
  c.call.tensors[slot] = t;
  c.spans[slot] = {begin, begin + uintptr_t(need)};
  c.overlap |= 1u << slot;
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
