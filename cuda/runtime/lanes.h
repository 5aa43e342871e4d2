// Lanes: streams beside the device's own on which one call runs parts that
// may overlap (a stacked call's layers as a wavefront, stacked_wavefront.h).
// Lane 0 is the device's stream. While a thread uses lane k, state(device)
// gives it lane k's state (its own stream and a cuBLAS handle bound to it,
// the device's side stream), so every op runs on a lane unchanged.
// Correctness rests on three rules:
// - every lane starts after everything queued on the device's stream when
//   the scope opens (the fork), and the device's stream waits for every lane
//   when it closes (the join); between lanes only signal and wait order work;
// - while any scope is open on the device, every block freed there (by any
//   thread) is parked, and goes back to the pool after the last scope's join:
//   a block freed by work on one lane is never handed to work on another
//   that may run beside it;
// - the lane's thread opens and closes the scope (state() follows the thread).
// A wait names a signal already queued, so lanes cannot wait on each other in
// a cycle, even where several threads' scopes share a lane's stream.
// Under capture the fork, the signals and the join become edges of the graph.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace lltm::cuda {

class Lanes {
 public:
  // Forks `count` lanes (1 to kMaxLanes) on the current device, and leaves the calling thread on lane 0.
  Lanes(int device, int count);
  // Joins them; the thread is back on the device's stream.
  ~Lanes();
  Lanes(const Lanes&) = delete;
  Lanes& operator=(const Lanes&) = delete;

  static constexpr int kMaxLanes = 8;

  // The calling thread's work goes to lane `lane` from now.
  void use(int lane);
  // Marks what is queued on `lane` so far, for wait().
  void signal(int lane);
  // Work queued on `lane` from now runs after `on`'s last signal.
  void wait(int lane, int on);

 private:
  // Lane `lane`'s stream, the calling thread left on the lane it was on.
  cudaStream_t stream_of(int lane) const;

  int device_, count_;
  std::vector<cudaEvent_t> events_;  // per lane: its last signal (its end, at the join)
};

// Whether the calling thread runs on a lane of `device` while other lanes
// may run beside it: the sequence engine then keeps its recurrence in
// clusters that leave the rest of the device to them.
bool on_shared_lane(int device);

// For the memory pool: whether a block freed now waits for the lanes' join
// (then it is parked, and freed again after it).
bool park_free(int device, void* data);

}  // namespace lltm::cuda
