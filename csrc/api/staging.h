// Tensors whose dtype is not the call's compute type (bfloat16 and float16
// beside float32) reach the kernels as contiguous temporaries of the compute
// type: what the op reads is converted in before it runs, what it writes is
// converted back (round to nearest even) after, so that kernels of every
// backend see float32 or float64 only.
#pragma once

#include "backend.h"
#include "ops/hooks.h"

namespace lltm::api {

class Staging {
 public:
  // Stages c.call's tensors on the CPU (backend nullptr) or the backend's device.
  Staging(ops::Checking& c, const DeviceBackend* backend, int32_t device);
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  // After the op ran: the outputs converted back into the caller's tensors.
  void write_back();

 private:
  void stage();
  void release() noexcept;
  void* alloc(uint64_t bytes);
  void convert(const lltm_tensor& dst, const lltm_tensor& src);

  ops::Checking& c_;
  const DeviceBackend* backend_;
  int32_t device_;
  uint32_t staged_ = 0;  // slots
  lltm_tensor tensors_[LLTM_MAX_SLOTS];
};

}  // namespace lltm::api
