// Step capture on a device's stream (lltm.h's lltm_capture_*): the work one
// thread queues between begin and end becomes a CUDA graph, replayed on the
// same stream; while it records, what would wait for the device is refused.
#pragma once

#include <cuda_runtime.h>

#include <mutex>
#include <shared_mutex>

namespace lltm::cuda {

void capture_begin(int device);
// The graph (an opaque handle), or nullptr when `keep` is false (discarded).
void* capture_end(int device, bool keep);
void graph_replay(void* graph, int device);
void graph_destroy(void* graph, int device);

// Whether work queued on `stream` now is being recorded rather than run
// (then nothing may wait for the stream or read the device to the host).
bool recording(cudaStream_t stream);

// A call's hold on a device's stream, for the whole call (each entry of
// backend.cu takes one before it queues anything). Refuses, naming `fn`, a
// call from a thread other than the one capturing the device, and (when
// `waits`) a call from the capturing thread that would wait for the device.
// While a thread other than the capturer holds one, no capture begins or
// ends on the device: a call's work is either all run or (the capturer's)
// all recorded, never run in part and recorded in part.
class StreamHold {
 public:
  StreamHold(int device, const char* fn, bool waits);

 private:
  std::shared_lock<std::shared_mutex> lock_;
};

}  // namespace lltm::cuda
