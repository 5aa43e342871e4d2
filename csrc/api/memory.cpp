// Memory entry points: allocation, byte transfers and synchronisation on any device.
#include <cstring>
#include <string>

#include "api/device.h"
#include "cpu/lltm_cpu.h"
#include "lltm.h"
#include "lltm_args.h"

using namespace lltm;
using api::entry;
using api::on_device;

namespace {

// Byte counts of lltm_read and lltm_write: at most 2^63, and the caller's
// ranges must not wrap the address space.
void check_transfer(const char* fn, const void* dst, const char* dst_name, const void* src, const char* src_name,
                    uint64_t bytes) {
  if (dst == nullptr) fail(LLTM_ERR_NULL_POINTER, std::string(fn) + ": '" + dst_name + "' is a null pointer");
  if (src == nullptr) fail(LLTM_ERR_NULL_POINTER, std::string(fn) + ": '" + src_name + "' is a null pointer");
  if (bytes > kMaxBytes)
    fail(LLTM_ERR_INVALID_SHAPE, std::string(fn) + ": bytes must be at most 2^63, got " + std::to_string(bytes));
  const uintptr_t last = UINTPTR_MAX - bytes;
  if (reinterpret_cast<uintptr_t>(dst) > last || reinterpret_cast<uintptr_t>(src) > last)
    fail(LLTM_ERR_INVALID_SHAPE, std::string(fn) + ": " + std::to_string(bytes) +
                                     " bytes from there pass the end of the address space");
}

}  // namespace

extern "C" {

LLTM_API int32_t lltm_alloc(uint64_t bytes, int32_t device_kind, int32_t device_index, void** out) {
  if (out != nullptr) *out = nullptr;
  const char* fn = "lltm_alloc";
  return entry(fn, [&] {
    if (out == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_alloc: 'out' is a null pointer");
    check_bytes(bytes, fn);
    on_device(
        fn, device_kind, device_index, [&] { *out = cpu::alloc(bytes); },
        [&](const DeviceBackend& b) { return b.alloc(bytes, device_index, out); });
  });
}

LLTM_API int32_t lltm_free(void* data, int32_t device_kind, int32_t device_index) {
  if (data == nullptr) return LLTM_OK;
  return entry("lltm_free", [&] {
    on_device(
        "lltm_free", device_kind, device_index, [&] { cpu::free(data); },
        [&](const DeviceBackend& b) { return b.free(data, device_index); });
  });
}

// Pinned memory needs a GPU to pin it for: the CUDA backend's pool, whichever GPU copies from it.
LLTM_API int32_t lltm_alloc_pinned(uint64_t bytes, void** out) {
  if (out != nullptr) *out = nullptr;
  const char* fn = "lltm_alloc_pinned";
  return entry(fn, [&] {
    if (out == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_alloc_pinned: 'out' is a null pointer");
    check_bytes(bytes, fn);
    const DeviceBackend* backend = api::device_for(LLTM_CUDA, 0, fn);
    api::check(backend, backend->pinned_alloc(bytes, out));
  });
}

LLTM_API int32_t lltm_free_pinned(void* data) {
  if (data == nullptr) return LLTM_OK;
  const char* fn = "lltm_free_pinned";
  return entry(fn, [&] {
    const DeviceBackend* backend = api::device_for(LLTM_CUDA, 0, fn);
    api::check(backend, backend->pinned_free(data));
  });
}

// On the CPU both are plain byte moves; memmove, so that overlapping ranges are handled rather than undefined.
LLTM_API int32_t lltm_read(void* host_dst, const void* src, uint64_t bytes, int32_t device_kind,
                           int32_t device_index) {
  return entry("lltm_read", [&] {
    check_transfer("lltm_read", host_dst, "host_dst", src, "src", bytes);
    on_device(
        "lltm_read", device_kind, device_index, [&] { std::memmove(host_dst, src, bytes); },
        [&](const DeviceBackend& b) { return b.read(host_dst, src, bytes, device_index); });
  });
}

LLTM_API int32_t lltm_write(void* dst, const void* host_src, uint64_t bytes, int32_t device_kind,
                            int32_t device_index) {
  return entry("lltm_write", [&] {
    check_transfer("lltm_write", dst, "dst", host_src, "host_src", bytes);
    on_device(
        "lltm_write", device_kind, device_index, [&] { std::memmove(dst, host_src, bytes); },
        [&](const DeviceBackend& b) { return b.write(dst, host_src, bytes, device_index); });
  });
}

LLTM_API int32_t lltm_synchronize(int32_t device_kind, int32_t device_index) {
  return entry("lltm_synchronize", [&] {
    on_device(
        "lltm_synchronize", device_kind, device_index, [] {},
        [&](const DeviceBackend& b) { return b.synchronize(device_index); });
  });
}

LLTM_API int32_t lltm_memory_stat(int32_t stat, int32_t device_kind, int32_t device_index, uint64_t* out) {
  if (out != nullptr) *out = 0;
  const char* fn = "lltm_memory_stat";
  return entry(fn, [&] {
    if (out == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_memory_stat: 'out' is a null pointer");
    if (stat < LLTM_MEMORY_ALLOCATED || stat > LLTM_MEMORY_RESERVED)
      fail(LLTM_ERR_INVALID_ARGUMENT, "lltm_memory_stat: 'stat' must be an lltm_memory_stat_kind (0 to " +
                                          std::to_string(LLTM_MEMORY_RESERVED) + "), got " + std::to_string(stat));
    on_device(
        fn, device_kind, device_index, [&] { *out = cpu::counters().get(stat); },
        [&](const DeviceBackend& b) { return b.memory_stat(stat, device_index, out); });
  });
}

LLTM_API int32_t lltm_memory_reset_peak(int32_t device_kind, int32_t device_index) {
  const char* fn = "lltm_memory_reset_peak";
  return entry(fn, [&] {
    on_device(
        fn, device_kind, device_index, [] { cpu::counters().reset_peak(); },
        [&](const DeviceBackend& b) { return b.reset_peak(device_index); });
  });
}

}  // extern "C"
