// The stacked ops' passes, for every backend: each layer as one call of the
// backend's own sequence op, on views of the stacked call's tensors
// (stacked_layout.h), or where the backend asks for one, the layers as a
// wavefront (stacked_wavefront.h). With two directions, where the backend
// asks, each direction on a lane of its own (the two meet between layers).
// `Parts` runs a part on the call's device and lends scratch memory there:
//   void run(const OpCall& part);
//   void* alloc(uint64_t bytes);   void free(void* data);
//   bool directions_at_once(const OpCall& c, const StackedLayout& at);
// Parts are built from a validated call, so they need no checks of their own.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "lltm_args.h"
#include "op_call.h"
#include "op_slots.h"
#include "stacked_layout.h"
#include "stacked_views.h"
#include "stacked_wavefront.h"

namespace lltm {

namespace stacked {

// Direction d of a two-direction stack on lane d where `apart` (the Parts' lanes, none otherwise): use(d) before
// its parts, meet() between layers (each lane after both directions of the layer before), signal and wait as the
// lanes'.
template <typename Parts>
class DirectionLanes {
 public:
  DirectionLanes(Parts& parts, bool apart) {
    if (apart) lanes_.emplace(parts, 2);
  }
  void use(int64_t d) {
    if (lanes_) lanes_->use(int(d));
  }
  void signal(int lane) {
    if (lanes_) lanes_->signal(lane);
  }
  void wait(int lane, int on) {
    if (lanes_) lanes_->wait(lane, on);
  }
  void meet() {
    if (!lanes_) return;
    lanes_->signal(0);
    lanes_->signal(1);
    lanes_->wait(0, 1);
    lanes_->wait(1, 0);
  }

 private:
  std::optional<typename Parts::Lanes> lanes_;
};

}  // namespace stacked

template <typename Parts>
void stacked_forward(const OpCall& c, Parts& parts, const char* fn) {
  namespace s = slots::STACKED_FORWARD;
  namespace q = slots::SEQUENCE_FORWARD;
  const StackedLayout at = StackedLayout::of(c, int64_t(c.scalars[scalars::STACKED_FORWARD::align]), fn);
  const lltm_tensor &inputs = *c.tensors[s::inputs], &params = *c.tensors[s::params];
  const lltm_tensor* reserve = (c.flags & LLTM_SEQUENCE_TRAINING) != 0 ? c.tensors[s::reserve] : nullptr;
  const lltm_tensor* lengths = c.tensors[s::lengths];
  const int64_t chunks = stacked::wavefront_chunks(at, lengths != nullptr, parts.wavefront_chunks(c, at));
  if (chunks > 1) return wavefront_forward(c, parts, at, chunks, fn);
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
  stacked::DirectionLanes<Parts> lanes(parts, D == 2 && parts.directions_at_once(c, at));
  for (int64_t l = 0; l < at.layers; ++l) {
    const int64_t F = at.features_of(l);
    const lltm_tensor x = l == 0 ? inputs : stacked::dense(outputs_of(l - 1).data, c.compute, {T, B, F});
    const lltm_tensor out = outputs_of(l);
    if (l > 0) lanes.meet();
    for (int64_t d = 0; d < D; ++d) {
      lanes.use(d);
      OpCall p = stacked::sequence_part(c, LLTM_OP_SEQUENCE_FORWARD, c.flags & LLTM_SEQUENCE_TRAINING, F, T);
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
  const int64_t chunks = stacked::wavefront_chunks(at, lengths != nullptr, parts.wavefront_chunks(c, at));
  if (chunks > 1) return wavefront_backward(c, parts, at, chunks, fn);
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
  stacked::DirectionLanes<Parts> lanes(parts, D == 2 && parts.directions_at_once(c, at));
  for (int64_t l = at.layers - 1; l >= 0; --l) {
    if (l < at.layers - 1) lanes.meet();
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
      lanes.use(d);
      OpCall p = stacked::sequence_part(c, LLTM_OP_SEQUENCE_BACKWARD, c.flags & LLTM_ACCUMULATE_PARAM_GRADS, F, T);
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
      if (d == 0) lanes.signal(0);
      if (d == 1 && d_x != nullptr) {
        stacked::reverse_steps(c, parts, dx_back, dx_forward, lengths);
        // Into direction 0's input gradient, once it is written.
        lanes.wait(1, 0);
        stacked::add_into(c, parts, *d_x, dx_forward);
      }
    }
  }
}

}  // namespace lltm
