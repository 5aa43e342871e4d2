// Names for the slots and scalars of every op, from lltm_ops.def:
// slots::FORWARD::input is the index of forward's `input` in OpCall::tensors,
// scalars::ADAM_STEP::beta1 that of Adam's beta1 in OpCall::scalars.
#pragma once

#include "lltm.h"

namespace lltm {

namespace slots {
namespace none_ {
enum {
#define LLTM_DTYPE(ID, code, name, bytes, cls)
#define LLTM_OP(ID, code, entry, sizes, flags) }; } namespace ID { enum {
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
enum {
#define LLTM_DTYPE(ID, code, name, bytes, cls)
#define LLTM_OP(ID, code, entry, sizes, flags) }; } namespace ID { enum {
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
