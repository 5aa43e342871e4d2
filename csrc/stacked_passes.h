// The stacked ops' passes, for every backend: each layer as one call of the
// backend's own sequence op, on views of the stacked call's tensors
// (stacked_layout.h). `Parts` runs a part on the call's device and lends
// scratch memory there:
//   void run(const OpCall& part);
//   void* alloc(uint64_t bytes);   void free(void* data);
// Parts are built from a validated call, so they need no checks of their own.
#pragma once

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

}  // namespace stacked

template <typename Parts>
void stacked_forward(const OpCall& c, Parts& parts, const char* fn) {
  namespace s = slots::STACKED_FORWARD;
  namespace q = slots::SEQUENCE_FORWARD;
  const StackedLayout at = StackedLayout::of(c, int64_t(c.scalars[scalars::STACKED_FORWARD::align]), fn);
  const lltm_tensor &inputs = *c.tensors[s::inputs], &params = *c.tensors[s::params];
  const lltm_tensor* reserve = (c.flags & LLTM_SEQUENCE_TRAINING) != 0 ? c.tensors[s::reserve] : nullptr;
  const int64_t T = at.steps, B = at.batch, S = at.state;
  // Between layers, in the compute type: in the reserve when training, else two buffers in turn.
  const uint64_t between = uint64_t(T * B * S * element_size(c.compute));
  stacked::Scratch<Parts> buffers(parts, reserve == nullptr && at.layers > 1 ? 2 * between : 0);
  auto outputs_of = [&](int64_t l) {
    if (l == at.layers - 1) return *c.tensors[s::outputs];
    char* data = reserve != nullptr ? static_cast<char*>(reserve->data) + at.outputs_at(l)
                                    : static_cast<char*>(buffers.data()) + (l % 2) * between;
    return stacked::dense(data, c.compute, {T, B, S});
  };
  for (int64_t l = 0; l < at.layers; ++l) {
    const int64_t F = at.features_of(l);
    OpCall p = stacked::sequence_part(c, LLTM_OP_SEQUENCE_FORWARD, c.flags & LLTM_SEQUENCE_TRAINING, F);
    const lltm_tensor x = l == 0 ? inputs : outputs_of(l - 1), out = outputs_of(l);
    const lltm_tensor w = stacked::part(params, at.weights_at(l), {3 * S, S + F});
    const lltm_tensor b = stacked::part(params, at.bias_at(l), {3 * S});
    const lltm_tensor h0 = stacked::select(*c.tensors[s::h0], l), c0 = stacked::select(*c.tensors[s::c0], l);
    const lltm_tensor h = stacked::select(*c.tensors[s::last_h], l);
    const lltm_tensor cell = stacked::select(*c.tensors[s::last_cell], l);
    const lltm_tensor r = reserve != nullptr ? stacked::bytes_at(*reserve, at.reserve_at(l), at.reserve) : lltm_tensor{};
    p.tensors[q::inputs] = &x;
    p.tensors[q::weights] = &w;
    p.tensors[q::bias] = &b;
    p.tensors[q::h0] = &h0;
    p.tensors[q::c0] = &c0;
    p.tensors[q::outputs] = &out;
    p.tensors[q::last_h] = &h;
    p.tensors[q::last_cell] = &cell;
    p.tensors[q::reserve] = reserve != nullptr ? &r : nullptr;
    p.tensors[q::lengths] = c.tensors[s::lengths];
    parts.run(p);
  }
}

template <typename Parts>
void stacked_backward(const OpCall& c, Parts& parts, const char* fn) {
  namespace s = slots::STACKED_BACKWARD;
  namespace q = slots::SEQUENCE_BACKWARD;
  const StackedLayout at = StackedLayout::of(c, int64_t(c.scalars[scalars::STACKED_BACKWARD::align]), fn);
  const lltm_tensor &inputs = *c.tensors[s::inputs], &params = *c.tensors[s::params];
  const lltm_tensor &d_params = *c.tensors[s::d_params], &reserve = *c.tensors[s::reserve];
  const int64_t T = at.steps, B = at.batch, S = at.state;
  // The gradient of layer l's outputs, l < L - 1, in buffer l % 2: layer l + 1 writes it, layer l reads it.
  const uint64_t between = uint64_t(T * B * S * element_size(c.compute));
  stacked::Scratch<Parts> buffers(parts, at.layers > 1 ? 2 * between : 0);
  auto buffer = [&](int64_t l) {
    return stacked::dense(static_cast<char*>(buffers.data()) + (l % 2) * between, c.compute, {T, B, S});
  };
  for (int64_t l = at.layers - 1; l >= 0; --l) {
    const int64_t F = at.features_of(l);
    OpCall p = stacked::sequence_part(c, LLTM_OP_SEQUENCE_BACKWARD, c.flags & LLTM_ACCUMULATE_PARAM_GRADS, F);
    const lltm_tensor grad_out = l == at.layers - 1 ? lltm_tensor{} : buffer(l);
    const lltm_tensor d_x = l == 0 ? lltm_tensor{} : buffer(l - 1);
    const lltm_tensor x = l == 0 ? inputs
                                 : stacked::dense(static_cast<char*>(reserve.data) + at.outputs_at(l - 1), c.compute,
                                                  {T, B, S});
    const lltm_tensor r = stacked::bytes_at(reserve, at.reserve_at(l), at.reserve);
    const lltm_tensor w = stacked::part(params, at.weights_at(l), {3 * S, S + F});
    const lltm_tensor dw = stacked::part(d_params, at.weights_at(l), {3 * S, S + F});
    const lltm_tensor db = stacked::part(d_params, at.bias_at(l), {3 * S});
    const lltm_tensor h0 = stacked::select(*c.tensors[s::h0], l);
    const lltm_tensor d_h0 = stacked::select(*c.tensors[s::d_h0], l), d_c0 = stacked::select(*c.tensors[s::d_c0], l);
    lltm_tensor grad_h{}, grad_cell{};
    if (c.tensors[s::grad_last_h] != nullptr) grad_h = stacked::select(*c.tensors[s::grad_last_h], l);
    if (c.tensors[s::grad_last_cell] != nullptr) grad_cell = stacked::select(*c.tensors[s::grad_last_cell], l);
    p.tensors[q::grad_outputs] = l == at.layers - 1 ? c.tensors[s::grad_outputs] : &grad_out;
    p.tensors[q::grad_last_h] = c.tensors[s::grad_last_h] != nullptr ? &grad_h : nullptr;
    p.tensors[q::grad_last_cell] = c.tensors[s::grad_last_cell] != nullptr ? &grad_cell : nullptr;
    p.tensors[q::reserve] = &r;
    p.tensors[q::inputs] = &x;
    p.tensors[q::weights] = &w;
    p.tensors[q::h0] = &h0;
    p.tensors[q::d_inputs] = l == 0 ? c.tensors[s::d_inputs] : &d_x;
    p.tensors[q::d_weights] = &dw;
    p.tensors[q::d_bias] = &db;
    p.tensors[q::d_h0] = &d_h0;
    p.tensors[q::d_c0] = &d_c0;
    p.tensors[q::lengths] = c.tensors[s::lengths];
    parts.run(p);
  }
}

}  // namespace lltm
