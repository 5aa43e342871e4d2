#include "lltm_args.h"
#include "math/float32_copies.h"
#include "math/strided.h"

namespace lltm::cuda {

const lltm_tensor* Float32Copies::of(const lltm_tensor* t, bool read, bool written) {
  if (t == nullptr) return nullptr;
  buffers_.push_back(std::make_unique<Scratch>(size_t(numel(*t)) * sizeof(float)));
  lltm_tensor& copy = copies_.emplace_back(contiguous_like(*t, buffers_.back()->as<void>()));
  copy.dtype = LLTM_FLOAT32;
  if (read) strided_convert(copy, *t, stream_);
  if (written) written_.emplace_back(t, &copy);
  return &copy;
}

void Float32Copies::write_back() const {
  for (const auto& [caller, copy] : written_) strided_convert(*caller, *copy, stream_);
}

}  // namespace lltm::cuda
