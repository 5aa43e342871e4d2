// liblltm_cuda's one export: the DeviceBackend table that liblltm loads.
// run() finds the op's kernel in the registry its file under ops/ fills
// (runtime/op_registry.h).
#include <optional>
#include <string>

#include "backend.h"
#include "distributed/communicator.h"
#include "ops/copy.cuh"
#include "runtime/capture.h"
#include "runtime/device.h"
#include "runtime/memory_pool.h"
#include "runtime/op_registry.h"
#include "runtime/pinned_pool.h"
#include "runtime/side_work.h"
#include "runtime/transfer.h"
#include "status.h"

namespace lltm::cuda {
namespace {

// The name an op's messages start with, from lltm_ops.def.
std::string entry_name(int32_t op) {
  switch (op) {
#define LLTM_DTYPE(ID, code, name, bytes, cls)
#define LLTM_SLOT(name, role, shape)
#define LLTM_SCALAR(name, kind, lo, hi)
#define LLTM_OP(ID, code, entry, sizes, flags) \
  case LLTM_OP_##ID:                           \
    return entry;
#include "lltm_ops.def"
#undef LLTM_DTYPE
#undef LLTM_OP
#undef LLTM_SLOT
#undef LLTM_SCALAR
  }
  return "op " + std::to_string(op);
}

void run(const OpCall& call, int device) {
  // COPY's source may live elsewhere, which an OpCall cannot say: it arrives through the copy entry.
  if (call.op == LLTM_OP_COPY)
    fail(LLTM_ERR_INTERNAL, "lltm_copy: a copy reaches the CUDA backend through its copy entry, not run");
  const OpRunner runner = op_runner(call.op);
  if (runner == nullptr)
    fail(LLTM_ERR_BACKEND_UNAVAILABLE, entry_name(call.op) + ": the CUDA backend has no kernel for this op");
  runner(call, device);
}

int32_t device_count_entry() { return device_count(); }

int32_t run_entry(const OpCall* call, int32_t device) {
  return guard([&] {
    const StreamHold hold(device, entry_name(call->op).c_str(), false);
    // The device's stream waits for side work the call's tensors meet (runtime/side_work.h).
    settle_side_work(device, call->tensors, LLTM_MAX_SLOTS);
    run(*call, device);
  });
}

int32_t alloc_entry(uint64_t bytes, int32_t device, void** out) {
  return guard([&] {
    // Another thread's block must not come from those a capture in progress keeps for its graph.
    const StreamHold hold(device, "lltm_alloc", false);
    *out = alloc(bytes, device);
  });
}

int32_t free_entry(void* data, int32_t device) {
  return guard([&] { free(data, device); });
}

int32_t pinned_alloc_entry(uint64_t bytes, void** out) {
  return guard([&] { *out = pinned_alloc(bytes); });
}

int32_t pinned_free_entry(void* data) {
  return guard([&] { pinned_free(data); });
}

int32_t copy_entry(const lltm_tensor* dst, int32_t dst_on_device, int32_t dst_device, const lltm_tensor* src,
                   int32_t src_on_device, int32_t src_device, uint32_t flags) {
  return guard([&] {
    // A copy that involves the host, or two devices, waits for the stream.
    const bool waits = dst_on_device == 0 || src_on_device == 0 || dst_device != src_device;
    const bool same_device = dst_on_device != 0 && src_on_device != 0 && dst_device == src_device;
    std::optional<StreamHold> to, from;
    if (dst_on_device != 0) to.emplace(dst_device, "lltm_copy", waits);
    if (src_on_device != 0 && !same_device) from.emplace(src_device, "lltm_copy", waits);
    if (same_device) {
      const lltm_tensor* both[] = {dst, src};
      settle_side_work(dst_device, both, 2);
    } else {
      if (dst_on_device != 0) settle_side_work(dst_device);
      if (src_on_device != 0) settle_side_work(src_device);
    }
    copy(*dst, dst_on_device != 0, dst_device, *src, src_on_device != 0, src_device,
         (flags & LLTM_COPY_NON_BLOCKING) != 0);
  });
}

int32_t read_entry(void* host_dst, const void* src, uint64_t bytes, int32_t device) {
  return guard([&] {
    const StreamHold hold(device, "lltm_read", true);
    settle_side_work(device);
    read(host_dst, src, bytes, device);
  });
}

int32_t write_entry(void* dst, const void* host_src, uint64_t bytes, int32_t device) {
  return guard([&] {
    const StreamHold hold(device, "lltm_write", true);
    settle_side_work(device);
    write(dst, host_src, bytes, device);
  });
}

int32_t synchronize_entry(int32_t device) {
  return guard([&] {
    const StreamHold hold(device, "lltm_synchronize", true);
    settle_side_work(device);
    synchronize(device);
  });
}

const char* blas_entry() { return blas_available() ? "cublas" : "own"; }

int32_t takes_half_entry(int32_t op) { return op_takes_half(op) ? 1 : 0; }

int32_t memory_stat_entry(int32_t stat, int32_t device, uint64_t* out) {
  return guard([&] { *out = counters(device).get(stat); });
}

int32_t reset_peak_entry(int32_t device) {
  return guard([&] { counters(device).reset_peak(); });
}

int32_t capture_begin_entry(int32_t device) {
  return guard([&] { capture_begin(device); });
}

int32_t capture_end_entry(int32_t device, void** graph) {
  return guard([&] {
    void* made = capture_end(device, graph != nullptr);
    if (graph != nullptr) *graph = made;
  });
}

int32_t graph_replay_entry(void* graph, int32_t device) {
  return guard([&] { graph_replay(graph, device); });
}

int32_t graph_destroy_entry(void* graph, int32_t device) {
  return guard([&] { graph_destroy(graph, device); });
}

int32_t nccl_version_entry(int32_t* version) {
  return guard([&] { nccl_version(version); });
}

int32_t nccl_unique_id_entry(uint8_t* id) {
  return guard([&] { nccl_unique_id(id); });
}

int32_t nccl_comm_init_entry(void** comm, const uint8_t* id, int32_t world_size, int32_t rank, int32_t device) {
  return guard([&] { nccl_comm_init(comm, id, world_size, rank, device); });
}

int32_t nccl_comm_destroy_entry(void* comm, int32_t abort) {
  return guard([&] { nccl_comm_destroy(comm, abort); });
}

int32_t nccl_comm_error_entry(void* comm) {
  return guard([&] { nccl_comm_error(comm); });
}

int32_t nccl_run_entry(void* comm, int32_t collective, const lltm_call* call) {
  return guard([&] { nccl_run(comm, collective, *call); });
}

int32_t nccl_join_entry(void* comm) {
  return guard([&] { nccl_join(comm); });
}

const DeviceBackend table = {LLTM_BACKEND_API_VERSION,
                             device_count_entry,
                             run_entry,
                             alloc_entry,
                             free_entry,
                             pinned_alloc_entry,
                             pinned_free_entry,
                             copy_entry,
                             read_entry,
                             write_entry,
                             synchronize_entry,
                             last_error,
                             blas_entry,
                             takes_half_entry,
                             memory_stat_entry,
                             reset_peak_entry,
                             capture_begin_entry,
                             capture_end_entry,
                             graph_replay_entry,
                             graph_destroy_entry,
                             nccl_version_entry,
                             nccl_unique_id_entry,
                             nccl_comm_init_entry,
                             nccl_comm_destroy_entry,
                             nccl_comm_error_entry,
                             nccl_run_entry,
                             nccl_join_entry};

}  // namespace
}  // namespace lltm::cuda

extern "C" LLTM_API const lltm::DeviceBackend* lltm_backend_v1() { return &lltm::cuda::table; }
