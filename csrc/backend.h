// The interface a device backend library (liblltm_cuda) exports through
// `lltm_backend_v1()`. It lists no ops: a backend runs any op of the table
// (lltm_ops.def) by its id, so adding an op never changes this interface.
// Calls arrive validated; each function returns an lltm_status and leaves
// its message for `last_error`.
#pragma once

#include <cstdint>

#include "op_call.h"

// The version of this table and of OpCall: raise it whenever either changes,
// whether or not the public LLTM_ABI_VERSION does. liblltm loads only a
// backend built with the same value. (The entry point keeps its name
// `lltm_backend_v1` for every version, so that an old backend reaches the
// version check instead of a missing symbol.)
#define LLTM_BACKEND_API_VERSION 7u

namespace lltm {

struct DeviceBackend {
  uint32_t api_version;  // LLTM_BACKEND_API_VERSION of the backend's build; stays the first field
  int32_t (*device_count)();
  // Runs call->op (any op but LLTM_OP_COPY) on `device`; LLTM_ERR_BACKEND_UNAVAILABLE,
  // naming the op, for one this backend has no kernel for.
  int32_t (*run)(const OpCall* call, int32_t device);
  // Stores the new block in *out (left NULL on failure).
  int32_t (*alloc)(uint64_t bytes, int32_t device, void** out);
  int32_t (*free)(void* data, int32_t device);
  // Page-locked host memory (lltm_alloc_pinned, lltm_free_pinned).
  int32_t (*pinned_alloc)(uint64_t bytes, void** out);
  int32_t (*pinned_free)(void* data);
  // A strided copy where at least one side is on the device, converting from
  // src's dtype to dst's; the other side's kind is given by `*_on_device`.
  // `flags`: LLTM_OP_COPY's (LLTM_COPY_NON_BLOCKING).
  int32_t (*copy)(const lltm_tensor* dst, int32_t dst_on_device, int32_t dst_device, const lltm_tensor* src,
                  int32_t src_on_device, int32_t src_device, uint32_t flags);
  int32_t (*read)(void* host_dst, const void* src, uint64_t bytes, int32_t device);
  int32_t (*write)(void* dst, const void* host_src, uint64_t bytes, int32_t device);
  int32_t (*synchronize)(int32_t device);
  const char* (*last_error)();
  // How products are computed: "cublas" (linked, or found and opened at run
  // time) or "own" (the backend's own kernels at every size).
  const char* (*blas)();
  // 1 where `run` takes op calls whose FLOAT tensors all have one half type
  // (bfloat16 or float16) as they are, OpCall.compute being that type;
  // 0 where the library stages such calls through float32.
  int32_t (*takes_half)(int32_t op);
  // The device's memory counter `stat` (an lltm_memory_stat_kind, checked by the caller) in *out.
  int32_t (*memory_stat)(int32_t stat, int32_t device, uint64_t* out);
  // Sets the device's peak of allocated bytes to what is allocated now.
  int32_t (*reset_peak)(int32_t device);
  // Step capture (lltm.h): begin/end on the device's stream; end with graph
  // null discards; replay queues the graph; destroy waits for it and frees it.
  int32_t (*capture_begin)(int32_t device);
  int32_t (*capture_end)(int32_t device, void** graph);
  int32_t (*graph_replay)(void* graph, int32_t device);
  int32_t (*graph_destroy)(void* graph, int32_t device);
  // NCCL (cuda/distributed/), opened on the first of these calls; the arguments arrive validated
  // as lltm.h's lltm_nccl_* entry points describe them, but for what only the communicator knows
  // (that the handle is live, its world size for counts and roots), which these check.
  int32_t (*nccl_version)(int32_t* version);
  int32_t (*nccl_unique_id)(uint8_t* id);
  int32_t (*nccl_comm_init)(void** comm, const uint8_t* id, int32_t world_size, int32_t rank, int32_t device);
  int32_t (*nccl_comm_destroy)(void* comm, int32_t abort);
  int32_t (*nccl_comm_error)(void* comm);
  int32_t (*nccl_run)(void* comm, int32_t collective, const lltm_call* call);
  int32_t (*nccl_join)(void* comm);
};

// The CUDA backend, loaded on first use; nullptr (with `why` set) when the
// library or a GPU is missing.
const DeviceBackend* cuda_backend(const char** why);

}  // namespace lltm

extern "C" typedef const lltm::DeviceBackend* (*lltm_backend_entry)();
