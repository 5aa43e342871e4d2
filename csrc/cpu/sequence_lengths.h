// Per-sample lengths of a sequence call (the optional int32 lengths slot),
// as the CPU sequence engines read them.
#pragma once

#include <cstdint>

#include "../lltm.h"
#include "../ops/refusals.h"

// In the variant's namespace, as everything the per-ISA sources share (kernels.h).
namespace lltm::cpu::LLTM_ISA_NAMESPACE {

// Each sample's number of steps: lengths[b], or T for all without lengths.
// Every length is checked before anything is written.
class Lengths {
 public:
  Lengths(const lltm_tensor* t, int64_t steps, const char* fn)
      : data_(t != nullptr ? static_cast<const int32_t*>(t->data) : nullptr), stride_(t != nullptr ? t->strides[0] : 0),
        steps_(steps) {
    if (data_ == nullptr) return;
    for (int64_t b = 0; b < t->sizes[0]; ++b)
      if (data_[b * stride_] < 1 || data_[b * stride_] > steps) ops::refuse_length(fn, b, data_[b * stride_], steps);
  }
  int64_t operator[](int64_t b) const { return data_ != nullptr ? data_[b * stride_] : steps_; }

 private:
  const int32_t* data_;
  int64_t stride_, steps_;
};

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
