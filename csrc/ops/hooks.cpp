#include "ops/hooks.h"

#include <cstdint>
#include <string>

#include "lltm_args.h"
#include "status.h"

namespace lltm::ops {

namespace {
// Constant-initialised, so registrations from other files' static
// initialisers find it ready whatever their order.
OpHooks registered[LLTM_OP_END];
}  // namespace

const OpHooks& op_hooks(int32_t op) { return registered[op]; }

RegisterHooks::RegisterHooks(int32_t op, OpHooks hooks) { registered[op] = hooks; }

void check_reserve(Checking& c, int slot, uint64_t need, const std::string& sizes, const char* bytes_fn) {
  const lltm_tensor* t = (c.given.given >> slot & 1u) != 0 ? &c.given.tensors[slot] : nullptr;
  if (t == nullptr || t->data == nullptr)
    fail(LLTM_ERR_NULL_POINTER, std::string(c.fn) + ": 'reserve' is a null pointer; training needs " +
                                    std::to_string(need) + " bytes (" + bytes_fn + ")");
  if (t->ndim != 1 || (t->sizes[0] > 1 && t->strides[0] != 1))
    fail(LLTM_ERR_INVALID_SHAPE, std::string(c.fn) + ": 'reserve' must be a contiguous 1-D buffer of bytes, got " +
                                     shape_string(*t) + " with stride " + std::to_string(t->strides[0]));
  if (t->sizes[0] < 0 || uint64_t(t->sizes[0]) < need)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(c.fn) + ": " +
                                        (c.typed ? "'reserve_bytes' is " + std::to_string(t->sizes[0])
                                                 : "'reserve' has " + std::to_string(t->sizes[0]) + " bytes") +
                                        " but " + sizes + " needs " + std::to_string(need) + " (" + bytes_fn + ")");
  const uintptr_t begin = reinterpret_cast<uintptr_t>(t->data);
  if (begin > UINTPTR_MAX - need)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(c.fn) + ": 'reserve' spans past the end of the address space");
  c.call.tensors[slot] = t;
  c.spans[slot] = {begin, begin + uintptr_t(need)};
  c.overlap |= 1u << slot;
}

}  // namespace lltm::ops
