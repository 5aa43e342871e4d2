// The lltm_nccl_* entry points: every argument checked here before the CUDA
// backend, which holds NCCL, sees it; what only a communicator knows (that a
// handle is live, its world size) the backend checks.
#include <string>

#include "api/device.h"
#include "lltm.h"
#include "lltm_args.h"
#include "ops/dtypes.h"
#include "overlap.h"

using namespace lltm;

namespace {

const DeviceBackend& backend_for(const char* fn) {
  const char* why = nullptr;
  const DeviceBackend* backend = cuda_backend(&why);
  if (backend == nullptr) fail(LLTM_ERR_BACKEND_UNAVAILABLE, std::string(fn) + ": NCCL needs the CUDA backend: " + why);
  return *backend;
}

void require(bool ok, lltm_status code, const char* fn, const std::string& what) {
  if (!ok) fail(code, std::string(fn) + ": " + what);
}

const char* const kCollectiveNames[] = {"all-reduce", "broadcast", "all-gather", "reduce-scatter"};

// tensors[0] is what a rank sends, tensors[1] what it receives.
const char* const kSlotNames[] = {"input", "output"};

void check_collective(const char* fn, int32_t collective, const lltm_call& call) {
  require(collective >= LLTM_ALL_REDUCE && collective <= LLTM_REDUCE_SCATTER, LLTM_ERR_INVALID_ARGUMENT, fn,
          "collective " + std::to_string(collective) + " is not an lltm_collective (0 to 3)");
  require(call.device_kind == LLTM_CUDA, LLTM_ERR_INVALID_DEVICE, fn,
          "NCCL collectives take CUDA tensors; device_kind is " + std::to_string(call.device_kind));
  api::device_for(call.device_kind, call.device_index, fn);
  require((call.flags & ~LLTM_COLLECTIVE_OVERLAP) == 0, LLTM_ERR_INVALID_ARGUMENT, fn,
          "flags must be 0 or LLTM_COLLECTIVE_OVERLAP (1), got " + std::to_string(call.flags));
  require(call.given == 3u, call.given & ~3u ? LLTM_ERR_INVALID_ARGUMENT : LLTM_ERR_NULL_POINTER, fn,
          "'given' must be 3 (tensors[0] 'input' and tensors[1] 'output'), got " + std::to_string(call.given));
  int64_t last[2];
  for (int k = 0; k < 2; ++k) {
    const lltm_tensor& t = call.tensors[k];
    last[k] = check_tensor(&t, fn, kSlotNames[k], k == 1);
    const DtypeInfo* info = dtype_info(t.dtype);
    require(info != nullptr && info->cls != DtypeClass::BYTES, LLTM_ERR_INVALID_DTYPE, fn,
            std::string("'") + kSlotNames[k] + "' has dtype " + std::to_string(t.dtype) + ", not an element type of lltm_dtype");
    require(is_contiguous(t), LLTM_ERR_INVALID_SHAPE, fn,
            std::string("'") + kSlotNames[k] + "' must be contiguous (NCCL sends memory as it lies)");
  }
  const lltm_tensor& in = call.tensors[0];
  const lltm_tensor& out = call.tensors[1];
  require(in.dtype == out.dtype, LLTM_ERR_INVALID_DTYPE, fn,
          std::string("'input' is ") + dtype_info(in.dtype)->name + ", 'output' " + dtype_info(out.dtype)->name +
              "; a collective keeps one dtype");
  const double scalar = call.scalars[0];
  if (collective == LLTM_ALL_REDUCE || collective == LLTM_REDUCE_SCATTER) {
    require(scalar == LLTM_REDUCE_SUM || scalar == LLTM_REDUCE_MEAN, LLTM_ERR_INVALID_ARGUMENT, fn,
            "scalars[0] must be an lltm_reduce_op (0 sum, 1 mean), got " + std::to_string(scalar));
    require(scalar == LLTM_REDUCE_SUM || is_float_dtype(in.dtype), LLTM_ERR_INVALID_DTYPE, fn,
            std::string("the mean needs a float dtype, got ") + dtype_info(in.dtype)->name);
  } else if (collective == LLTM_BROADCAST) {
    require(scalar >= 0 && scalar < 2147483648.0 && scalar == double(int64_t(scalar)), LLTM_ERR_INVALID_ARGUMENT, fn,
            "scalars[0] (the root rank) must be a non-negative integer, got " + std::to_string(scalar));
  }
  const int64_t element = dtype_info(in.dtype)->bytes;
  const Span spans[2] = {span_of(in, last[0], element), span_of(out, last[1], element)};
  const bool disjoint = spans[0].end <= spans[1].begin || spans[1].end <= spans[0].begin;
  const bool in_place = (collective == LLTM_ALL_REDUCE || collective == LLTM_BROADCAST) && same_view(in, out);
  require(disjoint || in_place, LLTM_ERR_INVALID_ARGUMENT, fn,
          std::string("'output' overlaps 'input' (an ") + kCollectiveNames[collective] +
              (collective == LLTM_ALL_REDUCE || collective == LLTM_BROADCAST ? " takes the very same view, or disjoint ones)"
                                                                               : " takes disjoint tensors)"));
}

}  // namespace

extern "C" {

LLTM_API int32_t lltm_nccl_version(int32_t* version) {
  const char* fn = "lltm_nccl_version";
  if (version != nullptr) *version = 0;
  return api::entry(fn, [&] {
    require(version != nullptr, LLTM_ERR_NULL_POINTER, fn, "'version' is a null pointer");
    const DeviceBackend& backend = backend_for(fn);
    api::check(&backend, backend.nccl_version(version));
  });
}

LLTM_API int32_t lltm_nccl_unique_id(uint8_t* id) {
  const char* fn = "lltm_nccl_unique_id";
  return api::entry(fn, [&] {
    require(id != nullptr, LLTM_ERR_NULL_POINTER, fn, "'id' is a null pointer");
    const DeviceBackend& backend = backend_for(fn);
    api::check(&backend, backend.nccl_unique_id(id));
  });
}

LLTM_API int32_t lltm_nccl_comm_init(void** comm, const uint8_t* id, int32_t world_size, int32_t rank,
                                     int32_t device_index) {
  const char* fn = "lltm_nccl_comm_init";
  if (comm != nullptr) *comm = nullptr;
  return api::entry(fn, [&] {
    require(comm != nullptr, LLTM_ERR_NULL_POINTER, fn, "'comm' is a null pointer");
    require(id != nullptr, LLTM_ERR_NULL_POINTER, fn, "'id' is a null pointer");
    require(world_size >= 1, LLTM_ERR_INVALID_ARGUMENT, fn,
            "'world_size' must be at least 1, got " + std::to_string(world_size));
    require(rank >= 0 && rank < world_size, LLTM_ERR_INVALID_ARGUMENT, fn,
            "'rank' must be in [0, " + std::to_string(world_size) + "), got " + std::to_string(rank));
    const DeviceBackend* backend = api::device_for(LLTM_CUDA, device_index, fn);
    api::check(backend, backend->nccl_comm_init(comm, id, world_size, rank, device_index));
  });
}

LLTM_API int32_t lltm_nccl_comm_destroy(void* comm, int32_t abort) {
  const char* fn = "lltm_nccl_comm_destroy";
  return api::entry(fn, [&] {
    require(comm != nullptr, LLTM_ERR_NULL_POINTER, fn, "'comm' is a null pointer");
    const DeviceBackend& backend = backend_for(fn);
    api::check(&backend, backend.nccl_comm_destroy(comm, abort));
  });
}

LLTM_API int32_t lltm_nccl_comm_error(void* comm) {
  const char* fn = "lltm_nccl_comm_error";
  return api::entry(fn, [&] {
    require(comm != nullptr, LLTM_ERR_NULL_POINTER, fn, "'comm' is a null pointer");
    const DeviceBackend& backend = backend_for(fn);
    api::check(&backend, backend.nccl_comm_error(comm));
  });
}

LLTM_API int32_t lltm_nccl_join(void* comm) {
  const char* fn = "lltm_nccl_join";
  return api::entry(fn, [&] {
    require(comm != nullptr, LLTM_ERR_NULL_POINTER, fn, "'comm' is a null pointer");
    const DeviceBackend& backend = backend_for(fn);
    api::check(&backend, backend.nccl_join(comm));
  });
}

LLTM_API int32_t lltm_nccl_run(void* comm, int32_t collective, const lltm_call* call) {
  const char* fn = "lltm_nccl_run";
  return api::entry(fn, [&] {
    require(comm != nullptr, LLTM_ERR_NULL_POINTER, fn, "'comm' is a null pointer");
    require(call != nullptr, LLTM_ERR_NULL_POINTER, fn, "'call' is a null pointer");
    check_collective(fn, collective, *call);
    const DeviceBackend& backend = backend_for(fn);
    api::check(&backend, backend.nccl_run(comm, collective, call));
  });
}

}  // extern "C"
