// Step capture on a device's stream (lltm.h's lltm_capture_*): the work one
// thread queues between begin and end becomes a CUDA graph, replayed on the
// same stream; while it records, what would wait for the device is refused.
#pragma once

#include <cuda_runtime.h>

namespace lltm::cuda {

void capture_begin(int device);
// The graph (an opaque handle), or nullptr when `keep` is false (discarded).
void* capture_end(int device, bool keep);
void graph_replay(void* graph, int device);
void graph_destroy(void* graph, int device);

// Whether work queued on `stream` now is being recorded rather than run
// (then nothing may wait for the stream or read the device to the host).
bool recording(cudaStream_t stream);

// Refuses, naming `fn`, a call from a thread other than the one capturing
// the device, and (when `waits`) a call from the capturing thread that would
// wait for the device.
void refuse_while_captured(int device, const char* fn, bool waits);

}  // namespace lltm::cuda
