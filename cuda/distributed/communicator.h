// The CUDA backend's NCCL entries (backend.h's nccl_*): communicators and
// collectives on the devices' streams. Each throws an lltm::Error.
#pragma once

#include <cstdint>

#include "lltm.h"

namespace lltm::cuda {

void nccl_version(int32_t* version);
void nccl_unique_id(uint8_t* id);
void nccl_comm_init(void** handle, const uint8_t* id, int32_t world_size, int32_t rank, int32_t device);
void nccl_comm_destroy(void* handle, int32_t abort);
void nccl_comm_error(void* handle);
void nccl_run(void* handle, int32_t collective, const lltm_call& call);
void nccl_join(void* handle);

}  // namespace lltm::cuda
