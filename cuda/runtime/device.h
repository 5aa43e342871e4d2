// Per-device state (its stream, a second stream for work a call leaves
// running (runtime/side_work.h), a cuBLAS handle bound to each, a caching
// memory pool), the current-device guard, and pooled scratch buffers.
#pragma once

#include <cstddef>

#include "runtime/cuda_check.h"

namespace lltm::cuda {

struct DeviceState {
  cudaStream_t stream;
  cudaStream_t side;
#if LLTM_HAVE_CUBLAS
  cublasHandle_t blas = nullptr;       // null where cuBLAS was not found (runtime/cublas_loader.h)
  cublasHandle_t side_blas = nullptr;  // bound to `side`: a handle's workspace serves one stream at a time
#endif
};

// Makes `device` current for the guard's lifetime and restores the caller's
// device afterwards, so tensors on cuda:1 run on cuda:1 whatever the
// process's current device is.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  int device_;
};

// The device's state, created on first use; the device must be current. On
// a lane of the device (runtime/lanes.h), the lane's state: its own stream
// and cuBLAS handle, the device's side stream.
DeviceState& state(int device);

// The state of lane `lane` of `device` (0: the device's own), whichever lane the calling thread is on.
DeviceState& lane_state(int device, int lane);

// The calling thread's lane on `device` from now (0: the device's stream;
// runtime/lanes.h), and the lane it is on.
void set_thread_lane(int device, int lane);
int thread_lane(int device);

int device_count();

// What the runtime says of a device that stays so while the process runs: asked once per device, in one place,
// so that every choice made from them sees the same answers.
struct DeviceFacts {
  int major;  // compute capability
  int multiprocessors;
  bool cooperative_launch, cluster_launch;
  // Shared memory: the most a block may opt into, a multiprocessor's, and what the system reserves per block.
  size_t shared_per_block, shared_per_multiprocessor, shared_reserved_per_block;
};

// `device`'s facts, asked on first use from any thread; throws where the runtime cannot answer.
const DeviceFacts& device_facts(int device);

// The current device's facts, or null where the device or its facts cannot be asked: for choices with a safe
// fallback (a plain launch, the scalar kernel), which must not throw.
const DeviceFacts* current_device_facts() noexcept;

// Scratch memory on the current device from the block cache (see
// memory_pool.cu), returned to it when the scope ends; stream order makes
// reuse by later work on the device's stream safe.
class Scratch {
 public:
  explicit Scratch(size_t bytes);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  int device_ = 0;
};

}  // namespace lltm::cuda
