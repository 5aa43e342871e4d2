#include "api/device.h"

#include <string>

namespace lltm::api {

namespace {

std::string prefix(const char* fn, const char* side) {
  return side == nullptr ? std::string(fn) : std::string(fn) + " (" + side + ")";
}

}  // namespace

const DeviceBackend* device_for(int32_t kind, int32_t index, const char* fn, const char* side) {
  if (kind == LLTM_CPU) {
    if (index != 0)
      fail(LLTM_ERR_INVALID_DEVICE,
           prefix(fn, side) + ": device_index must be 0 for the CPU, got " + std::to_string(index));
    return nullptr;
  }
  if (kind != LLTM_CUDA)
    fail(LLTM_ERR_INVALID_DEVICE,
         prefix(fn, side) + ": device_kind " + std::to_string(kind) + " is not cpu (0) or cuda (1)");
  const char* why = nullptr;
  const DeviceBackend* backend = cuda_backend(&why);
  if (backend == nullptr) fail(LLTM_ERR_BACKEND_UNAVAILABLE, prefix(fn, side) + ": " + why);
  const int32_t count = backend->device_count();
  if (count == 0) fail(LLTM_ERR_BACKEND_UNAVAILABLE, prefix(fn, side) + ": no CUDA GPU is present");
  if (index < 0 || index >= count)
    fail(LLTM_ERR_INVALID_DEVICE, prefix(fn, side) + ": device_index " + std::to_string(index) +
                                      " is out of range; this machine has " + std::to_string(count) +
                                      " CUDA device" + (count == 1 ? "" : "s"));
  return backend;
}

void check(const DeviceBackend* backend, int32_t status) {
  if (status != LLTM_OK) fail(static_cast<lltm_status>(status), backend->last_error());
}

}  // namespace lltm::api
