// Page-locked host memory (lltm_alloc_pinned): blocks from cudaHostAlloc, kept
// for reuse when freed. A copy that runs asynchronously from a block records
// an event on it, and a freed block goes to new work only once its events have
// completed, so a caller may free a block as soon as its copy is queued.
// These throw lltm::Error.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace lltm::cuda {

void* pinned_alloc(uint64_t bytes);
void pinned_free(void* data);
// Whether [data, data + bytes) lies within one block handed out and not freed.
bool is_pinned(const void* data, uint64_t bytes);
// Marks the block holding `data` as read or written by work now queued on `stream` of `device`.
void pinned_record_use(const void* data, cudaStream_t stream, int device);

}  // namespace lltm::cuda
