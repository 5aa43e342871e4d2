// The frame every exported function shares: errors become a status and a
// message naming the entry point called, and the device of a call becomes
// the CPU (nullptr) or a device backend.
#pragma once

#include <cstring>

#include "backend.h"
#include "status.h"

namespace lltm::api {

// Checks a device; returns its backend for a CUDA device, nullptr for the
// CPU. Messages start with fn, then `side` in parentheses where given
// ("lltm_copy (dst): ...").
const DeviceBackend* device_for(int32_t kind, int32_t index, const char* fn, const char* side = nullptr);

// Turns a backend's failure into an lltm::Error with its message.
void check(const DeviceBackend* backend, int32_t status);

// Whether `message` starts with the name `fn` (followed by ':' or ' ', so
// that "lltm_backward_ex: ..." does not count as naming lltm_backward).
inline bool names(const char* message, const char* fn) {
  const size_t n = std::strlen(fn);
  return std::strncmp(message, fn, n) == 0 && (message[n] == ':' || message[n] == ' ');
}

// guard() converts errors to a status, and a message from deeper down (a
// kernel, the device backend, the allocator) that does not name the entry
// point called gets its name in front.
template <typename Body>
int32_t entry(const char* fn, Body&& body) noexcept {
  const int32_t status = guard(body);
  if (status != LLTM_OK && !names(last_error(), fn)) name_last_error(fn);
  return status;
}

// An entry point's CPU or backend branch.
template <typename OnCpu, typename OnDevice>
void on_device(const char* fn, int32_t kind, int32_t index, OnCpu&& on_cpu, OnDevice&& on_backend) {
  const DeviceBackend* backend = device_for(kind, index, fn);
  if (backend == nullptr)
    on_cpu();
  else
    check(backend, on_backend(*backend));
}

}  // namespace lltm::api
