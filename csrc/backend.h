// The table of functions a device backend library (liblltm_cuda) exports
// through `lltm_backend_v1()`. Arguments arrive validated; each function
// returns an lltm_status and leaves its message for `last_error`.
#pragma once

#include <cstdint>

#include "lltm_args.h"

// The version of this table and of the C++ argument structs it passes
// (ForwardArgs, BackwardArgs, SgdArgs, AdamArgs, the Sequence*Args): raise it whenever either
// changes, whether or not the public LLTM_ABI_VERSION does. liblltm loads only
// a backend built with the same value. (The entry point keeps its name
// `lltm_backend_v1` for every version, so that an old backend reaches the
// version check instead of a missing symbol.)
#define LLTM_BACKEND_API_VERSION 3u

namespace lltm {

struct DeviceBackend {
  uint32_t api_version;  // LLTM_BACKEND_API_VERSION of the backend's build; stays the first field
  int32_t (*device_count)();
  int32_t (*forward)(const ForwardArgs* args, int32_t dtype, int32_t device);
  int32_t (*backward)(const BackwardArgs* args, int32_t dtype, int32_t device);
  // Stores the new block in *out (left NULL on failure).
  int32_t (*alloc)(uint64_t bytes, int32_t device, void** out);
  int32_t (*free)(void* data, int32_t device);
  // A strided copy where at least one side is on the device; the other side's
  // kind is given by `*_on_device`.
  int32_t (*copy)(const lltm_tensor* dst, int32_t dst_on_device, int32_t dst_device,
                  const lltm_tensor* src, int32_t src_on_device, int32_t src_device, int32_t dtype);
  int32_t (*fill)(const lltm_tensor* dst, double value, int32_t dtype, int32_t device);
  int32_t (*read)(void* host_dst, const void* src, uint64_t bytes, int32_t device);
  int32_t (*write)(void* dst, const void* host_src, uint64_t bytes, int32_t device);
  int32_t (*synchronize)(int32_t device);
  int32_t (*axpy)(const lltm_tensor* y, double alpha, const lltm_tensor* x, int32_t dtype, int32_t device);
  int32_t (*sgd_step)(const SgdArgs* args, int32_t dtype, int32_t device);
  int32_t (*adam_step)(const AdamArgs* args, int32_t dtype, int32_t device);
  const char* (*last_error)();
  // Whole sequences (lltm_sequence_*, from version 3); the reserve's layout is the backend's own.
  int32_t (*sequence_forward)(const SequenceForwardArgs* args, int32_t dtype, int32_t device);
  int32_t (*sequence_backward)(const SequenceBackwardArgs* args, int32_t dtype, int32_t device);
};

// The CUDA backend, loaded on first use; nullptr (with `why` set) when the
// library or a GPU is missing.
const DeviceBackend* cuda_backend(const char** why);

}  // namespace lltm

extern "C" typedef const lltm::DeviceBackend* (*lltm_backend_entry)();
