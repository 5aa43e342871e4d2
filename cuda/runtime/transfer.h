// Byte transfers between a caller's host buffer and device memory, and
// waiting for a device's queued work; these throw lltm::Error.
#pragma once

#include <cstdint>

namespace lltm::cuda {

void read(void* host_dst, const void* src, uint64_t bytes, int device);
void write(void* dst, const void* host_src, uint64_t bytes, int device);
void synchronize(int device);

}  // namespace lltm::cuda
