// COPY converts between any two float types itself; dst and src in the
// memory of different devices cannot overlap, whatever their addresses.
#include "ops/hooks.h"

namespace lltm::ops {

namespace {

void check(Checking& c) {
  if (c.given.device_kind != c.given.src_device_kind || c.given.device_index != c.given.src_device_index)
    c.overlap = 0;
}

}  // namespace

LLTM_OP_HOOKS(COPY, check, nullptr, true);

}  // namespace lltm::ops
