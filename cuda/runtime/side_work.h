// Work a call leaves running on its device's second stream when it returns.
// The sequence backward's weight gradients are read by nothing later in the
// backward but the optimizer, so they run beside the next calls (the layer
// below's recurrence, on the clusters' half of the device) instead of
// before them. Correctness rests on three rules:
// - the side work starts after everything queued on the device's stream
//   before it, and names every byte of the caller's it reads or writes;
// - every entry settles it (makes the device's stream wait for it) before
//   queuing work that could meet it: an op or a copy whose tensors overlap
//   those bytes, and unconditionally whatever reads the device to the host,
//   waits for it, begins or ends a capture, replays a graph or talks to NCCL;
// - a block freed while side work is pending that the side work touches (its
//   own scratch, and the caller's scratch it reads, which the caller names
//   too) goes back to the pool only once it is settled, so that neither
//   stream takes a block the other still uses; any other block is free at
//   once: its last use is queued on the device's stream, before whatever
//   takes it next there, and before the fork of any later side work.
// Under capture the fork and the settle become edges of the graph.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "lltm.h"
#include "overlap.h"

namespace lltm::cuda {

// The bytes a tensor's elements span (a BYTES slot's: sizes[0] bytes).
Span tensor_span(const lltm_tensor& t);

// While alive, work queued on stream() runs after everything queued on the
// device's stream so far (and after earlier side work), beside what is
// queued there later; it stays pending when the region ends, until settled.
// `touched`: the caller's bytes the work reads or writes; `flops`: its size,
// which the next calls read to choose their kernels (side_work_flops). The
// region's allocations come from the side stream's order.
class SideWork {
 public:
  SideWork(int device, std::vector<Span> touched, double flops);
  ~SideWork();
  SideWork(const SideWork&) = delete;
  SideWork& operator=(const SideWork&) = delete;
  cudaStream_t stream() const { return stream_; }

 private:
  int device_;
  cudaStream_t stream_;
  std::unique_lock<std::recursive_mutex> lock_;
};

// Makes the device's stream wait for pending side work if any of the
// tensors (null entries skipped) meets the bytes it touches; their spans are
// worked out only while side work is pending, as a call's entry asks at every call.
void settle_side_work(int device, const lltm_tensor* const* tensors, size_t count);
// Makes the device's stream wait for pending side work.
void settle_side_work(int device);
// The floating-point operations of the side work pending on the device (0: none), which the next calls share it with.
double side_work_flops(int device);

// For the memory pool: whether freeing the block [data, data + bytes) must
// wait for pending side work that touches it (then the block is kept and
// freed when the work is settled).
bool defer_free(int device, void* data, uint64_t bytes);
// For the memory pool: the stream a new block is ordered on for the calling
// thread (the side stream inside a SideWork region), else nullptr.
cudaStream_t side_allocation_stream();
// For the memory pool: a block allocated inside the calling thread's SideWork region, which its work touches.
void note_side_block(void* data, uint64_t bytes);

}  // namespace lltm::cuda
