// dst = src converted to dst's dtype (LLTM_OP_COPY, through the backend's
// copy entry): strided on either side when both are on devices, of one GPU
// or two; the host side, when there is one, contiguous. With non_blocking, a
// copy from pinned host memory (runtime/pinned_pool.h) to the device returns
// once queued; every other copy that involves the host has finished on return.
#pragma once

#include "lltm.h"

namespace lltm::cuda {

// Throws lltm::Error.
void copy(const lltm_tensor& dst, bool dst_on_device, int dst_device, const lltm_tensor& src, bool src_on_device,
          int src_device, bool non_blocking);

}  // namespace lltm::cuda
