// The part of NCCL's API (nccl.h) the backend calls, declared here from
// NCCL's documentation so that neither the build nor the package needs NCCL:
// the library is opened at run time (nccl_loader.cpp). The enums' values are
// NCCL's documented ones, stable since 2.10; ncclUniqueId is NCCL's 128
// opaque bytes, passed by value to ncclCommInitRank as nccl.h declares it.
#pragma once

#include <cstddef>
#include <type_traits>

#include "lltm.h"

// CUDA's stream handle, as cuda_runtime.h declares it, so that this header needs no CUDA header.
struct CUstream_st;

namespace lltm::cuda::nccl {

enum Result : int {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
};

enum DataType : int {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
};

enum RedOp : int {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
};

constexpr int kUniqueIdBytes = 128;
static_assert(kUniqueIdBytes == LLTM_NCCL_UNIQUE_ID_BYTES, "lltm.h's unique id is NCCL's");

struct UniqueId {
  char internal[kUniqueIdBytes];
};

struct Comm;
using Stream = CUstream_st*;

// Every function the backend resolves, with its nccl.h signature (as a function type).
#define LLTM_NCCL_FUNCTIONS(X)                                                                                         \
  X(ncclGetVersion, Result(int* version))                                                                              \
  X(ncclGetErrorString, const char*(Result result))                                                                    \
  X(ncclGetUniqueId, Result(UniqueId* id))                                                                             \
  X(ncclCommInitRank, Result(Comm** comm, int nranks, UniqueId id, int rank))                                          \
  X(ncclCommDestroy, Result(Comm* comm))                                                                               \
  X(ncclCommAbort, Result(Comm* comm))                                                                                 \
  X(ncclCommGetAsyncError, Result(Comm* comm, Result* async_error))                                                    \
  X(ncclAllReduce, Result(const void* send, void* recv, size_t count, DataType type, RedOp op, Comm* comm,             \
      Stream stream))                                                                                                  \
  X(ncclBroadcast, Result(const void* send, void* recv, size_t count, DataType type, int root, Comm* comm,             \
      Stream stream))                                                                                                  \
  X(ncclAllGather, Result(const void* send, void* recv, size_t send_count, DataType type, Comm* comm, Stream stream))  \
  X(ncclReduceScatter, Result(const void* send, void* recv, size_t recv_count, DataType type, RedOp op, Comm* comm,    \
      Stream stream))                                                                                                  \
  X(ncclGroupStart, Result())                                                                                          \
  X(ncclGroupEnd, Result())

struct Api {
#define LLTM_NCCL_MEMBER(name, type) std::add_pointer_t<type> name = nullptr;
  LLTM_NCCL_FUNCTIONS(LLTM_NCCL_MEMBER)
#undef LLTM_NCCL_MEMBER
  // ncclGetLastError (NCCL 2.13 and later): the last failure's detail, where the library has it.
  const char* (*ncclGetLastError)(Comm* comm) = nullptr;
  int version = 0;
};

// NCCL's functions, opening it on the first call (after setting NCCL_NVLS_ENABLE=0); an lltm::Error
// with LLTM_ERR_BACKEND_UNAVAILABLE, saying what was tried, where it is missing or too old.
const Api& api();

// Throws LLTM_ERR_CUDA with NCCL's message when `result` is not ncclSuccess.
void check(Result result, const char* what, Comm* comm = nullptr);

}  // namespace lltm::cuda::nccl
