// The stacked ops' passes, for every backend: each layer as one call of the
// backend's own sequence op, on views of the stacked call's tensors
// (stacked_layout.h). `Parts` runs a part on the call's device and lends
// scratch memory there:
//   void run(const OpCall& part);
//   void* alloc(uint64_t bytes);   void free(void* data);
// Parts are built from a validated call, so they need no checks of their own.
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

// A sequence op's call for layer `features` wide, with the stacked call's compute type, precision and sizes.
inline OpCall sequence_part(const OpCall& c, int32_t op, uint32_t flags, int64_t features) {
  OpCall p;
  p.op = op;
  p.compute = c.compute;
  p.flags = flags;
  p.float32_matmul_precision = c.float32_matmul_precision;
  for (char n : {'T', 'B', 'S'}) p.sizes[n - 'A'] = c.size(n);
  p.sizes['F' - 'A'] = features;
  return p;
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

template <typename Parts>
void stacked_forward(const OpCall& c, Parts& parts, const char* fn) {
  namespace s = slots::STACKED_FORWARD;
  namespace q = slots::SEQUENCE_FORWARD;
  const StackedLayout at = StackedLayout::of(c, int64_t(c.scalars[scalars::STACKED_FORWARD::align]), fn);
  const lltm_tensor &inputs = *c.tensors[s::inputs], &params = *c.tensors[s::params];
  const lltm_tensor* reserve = (c.flags & LLTM_SEQUENCE_TRAINING) != 0 ? c.tensors[s::reserve] : nullptr;
  const lltm_tensor* lengths = c.tensors[s::lengths];
  const int64_t T = at.steps, B = at.batch, S = at.state, D = at.directions, wide = element_size(c.compute);
  // Between layers, [T, B, D, S] in the compute type: in the reserve when training, else two buffers in turn.
  const uint64_t between = uint64_t(T * B * D * S * wide);
  stacked::Scratch<Parts> buffers(parts, reserve == nullptr && at.layers > 1 ? 2 * between : 0);
  // Direction 1 runs on its layer's input reversed (in the reserve when training, else in a buffer), into
  // outputs put back in time order after.
  const uint64_t widest = uint64_t(T * B * std::max(at.features, D * S) * wide);
  stacked::Scratch<Parts> reversed(parts, D == 2 && reserve == nullptr ? widest : 0);
  stacked::Scratch<Parts> backwards(parts, D == 2 ? uint64_t(T * B * S * wide) : 0);
  auto outputs_of = [&](int64_t l) {
    if (l == at.layers - 1) return *c.tensors[s::outputs];
    char* data = reserve != nullptr ? static_cast<char*>(reserve->data) + at.outputs_at(l)
                                    : static_cast<char*>(buffers.data()) + (l % 2) * between;
    return stacked::dense(data, c.compute, {T, B, D, S});
  };
  for (int64_t l = 0; l < at.layers; ++l) {
    const int64_t F = at.features_of(l);
    const lltm_tensor x = l == 0 ? inputs : stacked::dense(outputs_of(l - 1).data, c.compute, {T, B, F});
    const lltm_tensor out = outputs_of(l);
    for (int64_t d = 0; d < D; ++d) {
      OpCall p = stacked::sequence_part(c, LLTM_OP_SEQUENCE_FORWARD, c.flags & LLTM_SEQUENCE_TRAINING, F);
      const lltm_tensor w = stacked::part(params, at.weights_at(l, d), {3 * S, S + F});
      const lltm_tensor b = stacked::part(params, at.bias_at(l, d), {3 * S});
      const lltm_tensor h0 = stacked::state_of(*c.tensors[s::h0], l, d);
      const lltm_tensor c0 = stacked::state_of(*c.tensors[s::c0], l, d);
      const lltm_tensor h = stacked::state_of(*c.tensors[s::last_h], l, d);
      const lltm_tensor cell = stacked::state_of(*c.tensors[s::last_cell], l, d);
      const lltm_tensor r =
          reserve != nullptr ? stacked::bytes_at(*reserve, at.reserve_at(l, d), at.reserve) : lltm_tensor{};
      const lltm_tensor in_order = stacked::direction_of(out, d);
      void* x_back_data = reserve != nullptr ? static_cast<char*>(reserve->data) + at.reversed_at(l) : reversed.data();
      const lltm_tensor x_back = stacked::dense(x_back_data, c.compute, {T, B, F});
      const lltm_tensor out_back = stacked::dense(backwards.data(), c.compute, {T, B, S});
      if (d == 1) stacked::reverse_steps(c, parts, x, x_back, lengths);
      p.tensors[q::inputs] = d == 1 ? &x_back : &x;
      p.tensors[q::weights] = &w;
      p.tensors[q::bias] = &b;
      p.tensors[q::h0] = &h0;
      p.tensors[q::c0] = &c0;
      p.tensors[q::outputs] = d == 1 ? &out_back : &in_order;
      p.tensors[q::last_h] = &h;
      p.tensors[q::last_cell] = &cell;
      p.tensors[q::reserve] = reserve != nullptr ? &r : nullptr;
      p.tensors[q::lengths] = lengths;
      parts.run(p);
      if (d == 1) stacked::reverse_steps(c, parts, out_back, in_order, lengths);
    }
  }
}

template <typename Parts>
void stacked_backward(const OpCall& c, Parts& parts, const char* fn) {
  namespace s = slots::STACKED_BACKWARD;
  namespace q = slots::SEQUENCE_BACKWARD;
  const StackedLayout at = StackedLayout::of(c, int64_t(c.scalars[scalars::STACKED_BACKWARD::align]), fn);
  const lltm_tensor &inputs = *c.tensors[s::inputs], &params = *c.tensors[s::params];
  const lltm_tensor &d_params = *c.tensors[s::d_params], &reserve = *c.tensors[s::reserve];
  const lltm_tensor* lengths = c.tensors[s::lengths];
  const int64_t T = at.steps, B = at.batch, S = at.state, D = at.directions, wide = element_size(c.compute);
  // The gradient of layer l's outputs [T, B, D, S], l < L - 1, in buffer l % 2: layer l + 1 writes it, layer l
  // reads it.
  const uint64_t between = uint64_t(T * B * D * S * wide);
  stacked::Scratch<Parts> buffers(parts, at.layers > 1 ? 2 * between : 0);
  auto buffer = [&](int64_t l) { return static_cast<char*>(buffers.data()) + (l % 2) * between; };
  // Direction 1 runs on its layer's input reversed (kept in the reserve by the forward) and its output gradient
  // reversed; its input gradient, put back in time order, is added to direction 0's.
  const uint64_t widest = uint64_t(T * B * std::max(at.features, D * S) * wide);
  stacked::Scratch<Parts> reversed_dx(parts, D == 2 ? widest : 0), dx_in_order(parts, D == 2 ? widest : 0);
  stacked::Scratch<Parts> reversed_grad(parts, D == 2 ? uint64_t(T * B * S * wide) : 0);
  for (int64_t l = at.layers - 1; l >= 0; --l) {
    const int64_t F = at.features_of(l);
    const lltm_tensor x = l == 0 ? inputs
                                 : stacked::dense(static_cast<char*>(reserve.data) + at.outputs_at(l - 1), c.compute,
                                                  {T, B, F});
    const bool top = l == at.layers - 1;
    const lltm_tensor between_grad = top ? lltm_tensor{} : stacked::dense(buffer(l), c.compute, {T, B, D, S});
    const lltm_tensor* grad_y = top ? c.tensors[s::grad_outputs] : &between_grad;
    const lltm_tensor below_grad = l == 0 ? lltm_tensor{} : stacked::dense(buffer(l - 1), c.compute, {T, B, F});
    const lltm_tensor* d_x = l == 0 ? c.tensors[s::d_inputs] : &below_grad;
    for (int64_t d = 0; d < D; ++d) {
      OpCall p = stacked::sequence_part(c, LLTM_OP_SEQUENCE_BACKWARD, c.flags & LLTM_ACCUMULATE_PARAM_GRADS, F);
      const lltm_tensor r = stacked::bytes_at(reserve, at.reserve_at(l, d), at.reserve);
      const lltm_tensor w = stacked::part(params, at.weights_at(l, d), {3 * S, S + F});
      const lltm_tensor dw = stacked::part(d_params, at.weights_at(l, d), {3 * S, S + F});
      const lltm_tensor db = stacked::part(d_params, at.bias_at(l, d), {3 * S});
      const lltm_tensor h0 = stacked::state_of(*c.tensors[s::h0], l, d);
      const lltm_tensor d_h0 = stacked::state_of(*c.tensors[s::d_h0], l, d);
      const lltm_tensor d_c0 = stacked::state_of(*c.tensors[s::d_c0], l, d);
      lltm_tensor grad_h{}, grad_cell{}, grad_out{};
      if (c.tensors[s::grad_last_h] != nullptr) grad_h = stacked::state_of(*c.tensors[s::grad_last_h], l, d);
      if (c.tensors[s::grad_last_cell] != nullptr) grad_cell = stacked::state_of(*c.tensors[s::grad_last_cell], l, d);
      if (grad_y != nullptr) grad_out = stacked::direction_of(*grad_y, d);
      const lltm_tensor x_back =
          stacked::dense(static_cast<char*>(reserve.data) + at.reversed_at(l), c.compute, {T, B, F});
      const lltm_tensor grad_back = stacked::dense(reversed_grad.data(), c.compute, {T, B, S});
      const lltm_tensor dx_back = stacked::dense(reversed_dx.data(), c.compute, {T, B, F});
      const lltm_tensor dx_forward = stacked::dense(dx_in_order.data(), c.compute, {T, B, F});
      if (d == 1 && grad_y != nullptr) stacked::reverse_steps(c, parts, grad_out, grad_back, lengths);
      p.tensors[q::grad_outputs] = grad_y == nullptr ? nullptr : d == 1 ? &grad_back : &grad_out;
      p.tensors[q::grad_last_h] = c.tensors[s::grad_last_h] != nullptr ? &grad_h : nullptr;
      p.tensors[q::grad_last_cell] = c.tensors[s::grad_last_cell] != nullptr ? &grad_cell : nullptr;
      p.tensors[q::reserve] = &r;
      p.tensors[q::inputs] = d == 1 ? &x_back : &x;
      p.tensors[q::weights] = &w;
      p.tensors[q::h0] = &h0;
      p.tensors[q::d_inputs] = d_x == nullptr ? nullptr : d == 1 ? &dx_back : d_x;
      p.tensors[q::d_weights] = &dw;
      p.tensors[q::d_bias] = &db;
      p.tensors[q::d_h0] = &d_h0;
      p.tensors[q::d_c0] = &d_c0;
      p.tensors[q::lengths] = lengths;
      parts.run(p);
      if (d == 1 && d_x != nullptr) {
        stacked::reverse_steps(c, parts, dx_back, dx_forward, lengths);
        stacked::add_into(c, parts, *d_x, dx_forward);
      }
    }
  }
}

}  // namespace lltm
