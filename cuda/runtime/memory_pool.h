// Device memory from a per-device cache of blocks in front of the
// stream-ordered pool; these throw lltm::Error.
#pragma once

#include <cstdint>

namespace lltm::cuda {

void* alloc(uint64_t bytes, int device);
void free(void* data, int device);

}  // namespace lltm::cuda
