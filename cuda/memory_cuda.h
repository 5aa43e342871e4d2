// Device memory operations behind the DeviceBackend table; they throw lltm::Error.
#pragma once

#include <cstdint>

#include "lltm.h"

namespace lltm::cuda {

void* alloc(uint64_t bytes, int device);
void free(void* data, int device);
void copy(const lltm_tensor& dst, bool dst_on_device, int dst_device, const lltm_tensor& src, bool src_on_device,
          int src_device, int32_t dtype);
void fill(const lltm_tensor& dst, double value, int32_t dtype, int device);
void read(void* host_dst, const void* src, uint64_t bytes, int device);
void write(void* dst, const void* host_src, uint64_t bytes, int device);
void synchronize(int device);

}  // namespace lltm::cuda
