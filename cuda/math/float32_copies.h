// A half-type call's tensors as contiguous float32 temporaries on the current
// device, for the kernels that compute in float32: what the call reads is
// converted in at once, what it writes is converted back (round to nearest
// even) by write_back. The same as the library's staging (csrc/api/staging.h),
// for a backend that takes the call in its half type and keeps some of its
// tensors so.
#pragma once

#include <cuda_runtime.h>

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "lltm.h"
#include "runtime/device.h"

namespace lltm::cuda {

class Float32Copies {
 public:
  explicit Float32Copies(cudaStream_t stream) : stream_(stream) {}

  // t's float32 temporary (nullptr for a null t), its contents t's where `read`; written back where `written`.
  const lltm_tensor* of(const lltm_tensor* t, bool read, bool written);
  // Every written temporary converted into its caller's tensor, on the stream.
  void write_back() const;

 private:
  cudaStream_t stream_;
  std::deque<lltm_tensor> copies_;
  std::vector<std::unique_ptr<Scratch>> buffers_;
  std::vector<std::pair<const lltm_tensor*, const lltm_tensor*>> written_;  // (the caller's, its temporary)
};

}  // namespace lltm::cuda
