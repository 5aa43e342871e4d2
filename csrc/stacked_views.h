// Views of a stacked call's tensors and the parts every pass makes of them
// (stacked_passes.h, stacked_wavefront.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "lltm_args.h"
#include "op_call.h"
#include "op_slots.h"
#include "stacked_layout.h"

namespace lltm {

namespace stacked {

// Element k of dimension 0 of t, as a tensor of one dimension fewer ([L, B, S] -> [B, S]).
inline lltm_tensor select(const lltm_tensor& t, int64_t k) {
  lltm_tensor r{};
  r.data = static_cast<char*>(t.data) + k * t.strides[0] * element_size(int32_t(t.dtype));
  r.ndim = t.ndim - 1;
  for (int64_t d = 1; d < t.ndim; ++d) {
    r.sizes[d - 1] = t.sizes[d];
    r.strides[d - 1] = t.strides[d];
  }
  r.dtype = t.dtype;
  return r;
}

// A contiguous tensor of `sizes` at `data`.
inline lltm_tensor dense(void* data, int64_t dtype, std::initializer_list<int64_t> sizes) {
  lltm_tensor r{};
  r.data = data;
  r.dtype = dtype;
  for (int64_t n : sizes) r.sizes[r.ndim++] = n;
  int64_t stride = 1;
  for (int64_t d = r.ndim - 1; d >= 0; --d) {
    r.strides[d] = stride;
    stride *= r.sizes[d];
  }
  return r;
}

// Elements at element offset `at` of a flat tensor, as a contiguous tensor of `sizes`.
inline lltm_tensor part(const lltm_tensor& flat, int64_t at, std::initializer_list<int64_t> sizes) {
  return dense(static_cast<char*>(flat.data) + at * element_size(int32_t(flat.dtype)), flat.dtype, sizes);
}

// `bytes` bytes at byte offset `at` of the reserve, as a BYTES slot.
inline lltm_tensor bytes_at(const lltm_tensor& reserve, uint64_t at, uint64_t bytes) {
  return dense(static_cast<char*>(reserve.data) + at, LLTM_UINT8, {int64_t(bytes)});
}

// Scratch memory of Parts, freed with the scope.
template <typename Parts>
class Scratch {
 public:
  Scratch(Parts& parts, uint64_t bytes) : parts_(parts), data_(bytes == 0 ? nullptr : parts.alloc(bytes)) {}
  ~Scratch() {
    if (data_ != nullptr) parts_.free(data_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* data() const { return data_; }

 private:
  Parts& parts_;
  void* data_;
};

// A sequence op's call of `steps` steps for a layer `features` wide, with the stacked call's compute type,
// precision, batch and state size.
inline OpCall sequence_part(const OpCall& c, int32_t op, uint32_t flags, int64_t features, int64_t steps) {
  OpCall p;
  p.op = op;
  p.compute = c.compute;
  p.flags = flags;
  p.float32_matmul_precision = c.float32_matmul_precision;
  for (char n : {'B', 'S'}) p.sizes[n - 'A'] = c.size(n);
  p.sizes['T' - 'A'] = steps;
  p.sizes['F' - 'A'] = features;
  return p;
}

// Steps [t0, t0 + n) of a tensor whose dimension 0 is time.
inline lltm_tensor steps_of(const lltm_tensor& t, int64_t t0, int64_t n) {
  lltm_tensor r = t;
  r.data = static_cast<char*>(t.data) + t0 * t.strides[0] * element_size(int32_t(t.dtype));
  r.sizes[0] = n;
  return r;
}

// Direction d of a [T, B, D, S] tensor, as [T, B, S].
inline lltm_tensor direction_of(const lltm_tensor& t, int64_t d) {
  lltm_tensor r{};
  r.data = static_cast<char*>(t.data) + d * t.strides[2] * element_size(int32_t(t.dtype));
  r.ndim = 3;
  for (int k : {0, 1}) {
    r.sizes[k] = t.sizes[k];
    r.strides[k] = t.strides[k];
  }
  r.sizes[2] = t.sizes[3];
  r.strides[2] = t.strides[3];
  r.dtype = t.dtype;
  return r;
}

// Layer l's state in direction d of an [L, D, B, S] tensor, as [B, S].
inline lltm_tensor state_of(const lltm_tensor& t, int64_t l, int64_t d) { return select(select(t, l), d); }

// y = x with each sample's steps reversed within its length (LLTM_OP_REVERSE_STEPS), in the call's compute type.
template <typename Parts>
void reverse_steps(const OpCall& c, Parts& parts, const lltm_tensor& x, const lltm_tensor& y,
                   const lltm_tensor* lengths) {
  namespace r = slots::REVERSE_STEPS;
  OpCall p;
  p.op = LLTM_OP_REVERSE_STEPS;
  p.compute = c.compute;
  p.flags = 0;
  p.sizes['T' - 'A'] = x.sizes[0];
  p.sizes['B' - 'A'] = x.sizes[1];
  p.sizes['X' - 'A'] = x.sizes[2];
  p.tensors[r::x] = &x;
  p.tensors[r::lengths] = lengths;
  p.tensors[r::y] = &y;
  parts.run(p);
}

// y += x (LLTM_OP_AXPY), in the call's compute type.
template <typename Parts>
void add_into(const OpCall& c, Parts& parts, const lltm_tensor& y, const lltm_tensor& x) {
  namespace a = slots::AXPY;
  OpCall p;
  p.op = LLTM_OP_AXPY;
  p.compute = c.compute;
  p.flags = 0;
  p.tensors[a::y] = &y;
  p.tensors[a::x] = &x;
  p.scalars[scalars::AXPY::alpha] = 1.0;
  parts.run(p);
}

}  // namespace stacked

}  // namespace lltm
