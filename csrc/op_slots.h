// Names for the slots and scalars of every op, from lltm_ops.def:
// slots::FORWARD::input is the index of forward's `input` in OpCall::tensors,
// scalars::ADAM_STEP::beta1 that of Adam's beta1 in OpCall::scalars. The
// enums have names (Slot, Scalar) because an op without slots or scalars
// leaves an empty one, which nvcc warns about when it is anonymous.
#pragma once

#include "lltm.h"

namespace lltm {

namespace slots {
namespace none_ {
enum Slot {
#define LLTM_DTYPE(ID, code, name, bytes, cls)
#define LLTM_OP(ID, code, entry, sizes, flags) }; } namespace ID { enum Slot {
#define LLTM_SLOT(name, role, shape) name,
#define LLTM_SCALAR(name, kind, lo, hi)
#include "lltm_ops.def"
#undef LLTM_DTYPE
#undef LLTM_OP
#undef LLTM_SLOT
#undef LLTM_SCALAR
};
}
}  // namespace slots

namespace scalars {
namespace none_ {
enum Scalar {
#define LLTM_DTYPE(ID, code, name, bytes, cls)
#define LLTM_OP(ID, code, entry, sizes, flags) }; } namespace ID { enum Scalar {
#define LLTM_SLOT(name, role, shape)
#define LLTM_SCALAR(name, kind, lo, hi) name,
#include "lltm_ops.def"
#undef LLTM_DTYPE
#undef LLTM_OP
#undef LLTM_SLOT
#undef LLTM_SCALAR
};
}
}  // namespace scalars

}  // namespace lltm
