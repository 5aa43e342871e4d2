// NCCL communicators and the collectives on them: one communicator per
// rank's GPU, its collectives queued on that device's stream (the one every
// op of the device runs on), or with LLTM_COLLECTIVE_OVERLAP on a stream of
// the communicator's own, after the device stream's work so far and joined
// back into it by lltm_nccl_join, so that they run during the device's
// later work. Handles given out are tracked, so that a stale
// or foreign pointer is refused instead of followed.
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>

#include "distributed/communicator.h"
#include "distributed/nccl_api.h"
#include "ops/dtypes.h"
#include "runtime/capture.h"
#include "runtime/side_work.h"
#include "runtime/device.h"

namespace lltm::cuda {

namespace {

struct Communicator {
  nccl::Comm* comm;
  int world_size;
  int rank;
  int device;
  // The stream of LLTM_COLLECTIVE_OVERLAP collectives, made on the first; `queued` marks the device's
  // stream's work so far for it, `finished` its work for the device's stream to wait on at the join.
  cudaStream_t side = nullptr;
  cudaEvent_t queued = nullptr;
  cudaEvent_t finished = nullptr;
  bool pending = false;
};

// The communicator's side stream, ordered after the work queued on the device's stream so far.
cudaStream_t side_stream(Communicator& c, cudaStream_t device_stream) {
  if (c.side == nullptr) {
    LLTM_CUDA_CHECK(cudaStreamCreateWithFlags(&c.side, cudaStreamNonBlocking));
    LLTM_CUDA_CHECK(cudaEventCreateWithFlags(&c.queued, cudaEventDisableTiming));
    LLTM_CUDA_CHECK(cudaEventCreateWithFlags(&c.finished, cudaEventDisableTiming));
  }
  LLTM_CUDA_CHECK(cudaEventRecord(c.queued, device_stream));
  LLTM_CUDA_CHECK(cudaStreamWaitEvent(c.side, c.queued, 0));
  c.pending = true;
  return c.side;
}

void join(Communicator& c) {
  if (!c.pending) return;
  LLTM_CUDA_CHECK(cudaEventRecord(c.finished, c.side));
  LLTM_CUDA_CHECK(cudaStreamWaitEvent(state(c.device).stream, c.finished, 0));
  c.pending = false;
}

std::mutex registry_mutex;
std::unordered_set<Communicator*> registry;

Communicator& live(void* handle, const char* fn) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto* c = static_cast<Communicator*>(handle);
  if (registry.count(c) == 0)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": 'comm' is not a live communicator (destroyed, or never made)");
  return *c;
}

nccl::DataType nccl_type(int64_t dtype) {
  switch (dtype) {
    case LLTM_FLOAT32:
      return nccl::ncclFloat32;
    case LLTM_FLOAT64:
      return nccl::ncclFloat64;
    case LLTM_BFLOAT16:
      return nccl::ncclBfloat16;
    case LLTM_FLOAT16:
      return nccl::ncclFloat16;
    case LLTM_INT32:
      return nccl::ncclInt32;
  }
  fail(LLTM_ERR_INVALID_DTYPE, "lltm_nccl_run: dtype " + std::to_string(dtype) + " has no NCCL type");
}

int64_t count_of(const lltm_tensor& t) {
  int64_t n = 1;
  for (int64_t d = 0; d < t.ndim; ++d) n *= t.sizes[d];
  return n;
}

}  // namespace

void nccl_version(int32_t* version) { *version = nccl::api().version; }

void nccl_unique_id(uint8_t* id) {
  nccl::UniqueId fresh;
  nccl::check(nccl::api().ncclGetUniqueId(&fresh), "ncclGetUniqueId");
  std::memcpy(id, fresh.internal, sizeof fresh.internal);
}

void nccl_comm_init(void** handle, const uint8_t* id, int32_t world_size, int32_t rank, int32_t device) {
  const nccl::Api& api = nccl::api();
  DeviceGuard on(device);
  state(device);  // the device's stream and pool exist before NCCL's first collective on it
  nccl::UniqueId unique;
  std::memcpy(unique.internal, id, sizeof unique.internal);
  nccl::Comm* comm = nullptr;
  nccl::check(api.ncclCommInitRank(&comm, world_size, unique, rank), "ncclCommInitRank");
  auto* c = new Communicator{comm, world_size, rank, device};
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry.insert(c);
  *handle = c;
}

void nccl_comm_destroy(void* handle, int32_t abort) {
  Communicator* c = &live(handle, "lltm_nccl_comm_destroy");
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    registry.erase(c);
  }
  const nccl::Api& api = nccl::api();
  DeviceGuard on(c->device);
  nccl::Comm* comm = c->comm;
  if (c->side != nullptr) {
    join(*c);
    cudaEventDestroy(c->queued);
    cudaEventDestroy(c->finished);
    cudaStreamDestroy(c->side);
  }
  delete c;
  if (abort != 0)
    nccl::check(api.ncclCommAbort(comm), "ncclCommAbort");
  else
    nccl::check(api.ncclCommDestroy(comm), "ncclCommDestroy");
}

void nccl_comm_error(void* handle) {
  Communicator& c = live(handle, "lltm_nccl_comm_error");
  nccl::Result async = nccl::ncclSuccess;
  nccl::check(nccl::api().ncclCommGetAsyncError(c.comm, &async), "ncclCommGetAsyncError", c.comm);
  nccl::check(async, "a collective of this communicator", c.comm);
}

void nccl_run(void* handle, int32_t collective, const lltm_call& call) {
  const char* fn = "lltm_nccl_run";
  Communicator& c = live(handle, fn);
  if (call.device_index != c.device)
    fail(LLTM_ERR_INVALID_DEVICE, std::string(fn) + ": the tensors are on cuda:" + std::to_string(call.device_index) +
                                      ", the communicator on cuda:" + std::to_string(c.device));
  const lltm_tensor& in = call.tensors[0];
  const lltm_tensor& out = call.tensors[1];
  const int64_t n_in = count_of(in), n_out = count_of(out);
  const auto need = [&](bool ok, const std::string& what) {
    if (!ok) fail(LLTM_ERR_SHAPE_MISMATCH, std::string(fn) + ": " + what);
  };
  const std::string world = std::to_string(c.world_size);
  switch (collective) {
    case LLTM_ALL_REDUCE:
    case LLTM_BROADCAST:
      need(n_in == n_out, "'input' has " + std::to_string(n_in) + " elements, 'output' " + std::to_string(n_out) +
                              "; they must match");
      break;
    case LLTM_ALL_GATHER:
      need(n_out == n_in * c.world_size, "'output' must hold world_size (" + world + ") x " + std::to_string(n_in) +
                                             " elements, it has " + std::to_string(n_out));
      break;
    case LLTM_REDUCE_SCATTER:
      need(n_in == n_out * c.world_size, "'input' must hold world_size (" + world + ") x " + std::to_string(n_out) +
                                             " elements, it has " + std::to_string(n_in));
      break;
  }
  const int root = int(call.scalars[0]);
  if (collective == LLTM_BROADCAST && root >= c.world_size)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": the root rank " + std::to_string(root) +
                                        " is not below the world size " + world);
  const nccl::Api& api = nccl::api();
  const StreamHold hold(c.device, fn, false);
  settle_side_work(c.device);
  DeviceGuard on(c.device);
  cudaStream_t device_stream = state(c.device).stream;
  // NCCL needs a communicator's collectives to run in the order they were issued on every rank: one on the
  // device's stream waits for the side stream's, as one on the side stream waits for the device's work.
  if ((call.flags & LLTM_COLLECTIVE_OVERLAP) == 0) join(c);
  const cudaStream_t on_stream = (call.flags & LLTM_COLLECTIVE_OVERLAP) != 0 ? side_stream(c, device_stream) : device_stream;
  const nccl::Stream stream = reinterpret_cast<nccl::Stream>(on_stream);
  const nccl::DataType type = nccl_type(in.dtype);
  const nccl::RedOp op = call.scalars[0] == LLTM_REDUCE_MEAN ? nccl::ncclAvg : nccl::ncclSum;
  switch (collective) {
    case LLTM_ALL_REDUCE:
      nccl::check(api.ncclAllReduce(in.data, out.data, size_t(n_in), type, op, c.comm, stream), "ncclAllReduce", c.comm);
      break;
    case LLTM_BROADCAST:
      nccl::check(api.ncclBroadcast(in.data, out.data, size_t(n_in), type, root, c.comm, stream), "ncclBroadcast", c.comm);
      break;
    case LLTM_ALL_GATHER:
      nccl::check(api.ncclAllGather(in.data, out.data, size_t(n_in), type, c.comm, stream), "ncclAllGather", c.comm);
      break;
    case LLTM_REDUCE_SCATTER:
      nccl::check(api.ncclReduceScatter(in.data, out.data, size_t(n_out), type, op, c.comm, stream), "ncclReduceScatter",
                  c.comm);
      break;
  }
}

void nccl_join(void* handle) {
  Communicator& c = live(handle, "lltm_nccl_join");
  const StreamHold hold(c.device, "lltm_nccl_join", false);
  settle_side_work(c.device);
  DeviceGuard on(c.device);
  join(c);
}

}  // namespace lltm::cuda
