// A one-direction stack as a wavefront: each layer's sequence in K chunks of
// steps, layer l's chunk k in the same wave as layer l - 1's chunk k + 1
// (forward) or layer l + 1's chunk k - 1 (backward), each layer on its own
// lane, so that where a layer's recurrence holds only part of the device the
// layers run at once (as cuDNN's stacked RNNs do) instead of one after the
// other. A chunk is one call of the backend's sequence op on the steps'
// views: its state carried from the chunk before, its reserve a slice of the
// layer's (StackedLayout::chunk_reserve_at), its weight gradients added to
// the layer's. Samples with lengths run layer after layer: a sample's last
// step may fall in any chunk.
//
// Besides stacked_passes.h's, `Parts` provides:
//   int64_t wavefront_chunks(const OpCall& c, const StackedLayout& at);
//       the backend's K (1: none), from the call's sizes, compute type and float32 matmul precision alone, so
//       that a backward at its forward's precision (lltm_ops.def) makes the same choice: the reserve follows it;
//   Parts::Lanes(Parts&, int count), with use(lane), signal(lane) and wait(lane, on) as runtime/lanes.h's on CUDA.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "stacked_views.h"

namespace lltm {

namespace stacked {

// The chunks a call runs in: 1 (layer after layer) where the layout has no
// room for a wavefront or samples have lengths, else the backend's choice;
// LLTM_STACKED_CHUNKS, where set, overrides that choice (for tests and
// measurements). At most kMaxWavefrontChunks, and T.
inline int64_t wavefront_chunks(const StackedLayout& at, bool lengths, int64_t wanted) {
  static const int64_t forced = [] {
    const char* value = std::getenv("LLTM_STACKED_CHUNKS");
    return value != nullptr ? std::atoll(value) : 0;
  }();
  if (!at.wavefront() || lengths) return 1;
  const int64_t k = forced > 0 ? forced : wanted;
  return std::max<int64_t>(1, std::min({k, kMaxWavefrontChunks, at.steps}));
}

// Chunk k of K's first step.
inline int64_t chunk_start(const StackedLayout& at, int64_t k, int64_t K) { return k * at.steps / K; }

// A layer's state between its chunks, in turn: [L][2 (h, c)][2 (chunk parity)][B, S] in the compute type.
class Carries {
 public:
  Carries(void* data, const StackedLayout& at, int64_t dtype) : data_(data), at_(at), dtype_(dtype) {}
  static uint64_t bytes(const StackedLayout& at) {
    return uint64_t(at.layers * 4 * at.batch * at.state) * at.element_bytes;
  }
  lltm_tensor h(int64_t l, int64_t k) const { return at(l, 0, k % 2); }
  lltm_tensor c(int64_t l, int64_t k) const { return at(l, 1, k % 2); }

 private:
  lltm_tensor at(int64_t l, int64_t which, int64_t parity) const {
    const int64_t n = at_.batch * at_.state;
    return dense(static_cast<char*>(data_) + uint64_t(((l * 2 + which) * 2 + parity) * n) * at_.element_bytes, dtype_,
                 {at_.batch, at_.state});
  }
  void* data_;
  const StackedLayout& at_;
  int64_t dtype_;
};

}  // namespace stacked

template <typename Parts>
void wavefront_forward(const OpCall& c, Parts& parts, const StackedLayout& at, int64_t K, const char* fn) {
  namespace s = slots::STACKED_FORWARD;
  namespace q = slots::SEQUENCE_FORWARD;
  const lltm_tensor &inputs = *c.tensors[s::inputs], &params = *c.tensors[s::params];
  const uint32_t training = c.flags & LLTM_SEQUENCE_TRAINING;
  const lltm_tensor* reserve = training != 0 ? c.tensors[s::reserve] : nullptr;
  const int64_t T = at.steps, B = at.batch, S = at.state, L = at.layers;
  // Between layers, [T, B, S]: in the reserve when training, else a buffer a layer (the layers run at once).
  const uint64_t between = uint64_t(T * B * S) * at.element_bytes;
  stacked::Scratch<Parts> buffers(parts, reserve == nullptr ? uint64_t(L - 1) * between : 0);
  stacked::Scratch<Parts> carried(parts, stacked::Carries::bytes(at));
  const stacked::Carries carries(carried.data(), at, c.compute);
  auto outputs_of = [&](int64_t l) {
    if (l == L - 1) return stacked::direction_of(*c.tensors[s::outputs], 0);
    char* data = reserve != nullptr ? static_cast<char*>(reserve->data) + at.outputs_at(l)
                                    : static_cast<char*>(buffers.data()) + uint64_t(l) * between;
    return stacked::dense(data, c.compute, {T, B, S});
  };
  // Chunk k's last h, which chunk k + 1 starts from: the last layer's is kept in the reserve for the backward.
  auto h_after = [&](int64_t l, int64_t k) {
    if (l == L - 1 && reserve != nullptr)
      return stacked::dense(static_cast<char*>(reserve->data) + at.boundary_at(k + 1), c.compute, {B, S});
    return carries.h(l, k);
  };
  typename Parts::Lanes lanes(parts, int(L));
  for (int64_t wave = 0; wave < K + L - 1; ++wave) {
    // From the top down, so that a layer waits for the layer below's previous signal before it signals again.
    for (int64_t l = L - 1; l >= 0; --l) {
      const int64_t k = wave - l;
      if (k < 0 || k >= K) continue;
      const int64_t t0 = stacked::chunk_start(at, k, K), n = stacked::chunk_start(at, k + 1, K) - t0;
      const int64_t F = at.features_of(l);
      lanes.use(int(l));
      if (l > 0) lanes.wait(int(l), int(l - 1));
      const lltm_tensor x = stacked::steps_of(l == 0 ? inputs : outputs_of(l - 1), t0, n);
      const lltm_tensor out = stacked::steps_of(outputs_of(l), t0, n);
      const lltm_tensor w = stacked::part(params, at.weights_at(l, 0), {3 * S, S + F});
      const lltm_tensor b = stacked::part(params, at.bias_at(l, 0), {3 * S});
      const lltm_tensor h0 = k == 0 ? stacked::state_of(*c.tensors[s::h0], l, 0) : h_after(l, k - 1);
      const lltm_tensor c0 = k == 0 ? stacked::state_of(*c.tensors[s::c0], l, 0) : carries.c(l, k - 1);
      const bool last = k == K - 1;
      const lltm_tensor h = last ? stacked::state_of(*c.tensors[s::last_h], l, 0) : h_after(l, k);
      const lltm_tensor cell = last ? stacked::state_of(*c.tensors[s::last_cell], l, 0) : carries.c(l, k);
      const lltm_tensor r =
          reserve != nullptr
              ? stacked::bytes_at(*reserve, at.chunk_reserve_at(l, k, t0), sequence_reserve_bytes({n, B, F, S}, c.compute, fn))
              : lltm_tensor{};
      OpCall p = stacked::sequence_part(c, LLTM_OP_SEQUENCE_FORWARD, training, F, n);
      p.tensors[q::inputs] = &x;
      p.tensors[q::weights] = &w;
      p.tensors[q::bias] = &b;
      p.tensors[q::h0] = &h0;
      p.tensors[q::c0] = &c0;
      p.tensors[q::outputs] = &out;
      p.tensors[q::last_h] = &h;
      p.tensors[q::last_cell] = &cell;
      p.tensors[q::reserve] = reserve != nullptr ? &r : nullptr;
      p.tensors[q::lengths] = nullptr;
      parts.run(p);
      if (l < L - 1) lanes.signal(int(l));
    }
  }
}

template <typename Parts>
void wavefront_backward(const OpCall& c, Parts& parts, const StackedLayout& at, int64_t K, const char* fn) {
  namespace s = slots::STACKED_BACKWARD;
  namespace q = slots::SEQUENCE_BACKWARD;
  const lltm_tensor &inputs = *c.tensors[s::inputs], &params = *c.tensors[s::params];
  const lltm_tensor &d_params = *c.tensors[s::d_params], &reserve = *c.tensors[s::reserve];
  const int64_t T = at.steps, B = at.batch, S = at.state, L = at.layers;
  // The gradient of layer l's outputs [T, B, S], l < L - 1, in buffer l % 2: layer l + 1 writes a chunk of it,
  // layer l reads that chunk once layer l + 1's signal says it is written, and layer l - 1 writes it again
  // only after layer l's signal for the same chunk.
  const uint64_t between = uint64_t(T * B * S) * at.element_bytes;
  stacked::Scratch<Parts> buffers(parts, 2 * between);
  auto buffer = [&](int64_t l) {
    return stacked::dense(static_cast<char*>(buffers.data()) + uint64_t(l % 2) * between, c.compute, {T, B, S});
  };
  // The gradients of a chunk's first state, which the chunk before reads as those of its last.
  stacked::Scratch<Parts> carried(parts, stacked::Carries::bytes(at));
  const stacked::Carries carries(carried.data(), at, c.compute);
  // Chunk k's h0 (k > 0, from step t0): the h of the step before, from the outputs the forward kept.
  auto h_before = [&](int64_t l, int64_t k, int64_t t0) {
    if (l == L - 1)
      return stacked::dense(static_cast<char*>(reserve.data) + at.boundary_at(k), c.compute, {B, S});
    return stacked::select(stacked::dense(static_cast<char*>(reserve.data) + at.outputs_at(l), c.compute, {T, B, S}),
                           t0 - 1);
  };
  typename Parts::Lanes lanes(parts, int(L));
  for (int64_t wave = 0; wave < K + L - 1; ++wave) {
    // From the bottom up, so that a layer waits for the layer above's previous signal before it signals again.
    for (int64_t l = 0; l < L; ++l) {
      const int64_t k = K - 1 - (wave - (L - 1 - l));
      if (k < 0 || k >= K) continue;
      const int64_t t0 = stacked::chunk_start(at, k, K), n = stacked::chunk_start(at, k + 1, K) - t0;
      const int64_t F = at.features_of(l);
      const bool top = l == L - 1, last = k == K - 1;
      lanes.use(int(l));
      if (!top) lanes.wait(int(l), int(l + 1));
      const lltm_tensor x = stacked::steps_of(
          l == 0 ? inputs : stacked::dense(static_cast<char*>(reserve.data) + at.outputs_at(l - 1), c.compute, {T, B, F}),
          t0, n);
      lltm_tensor grad_out{};
      const lltm_tensor* grad_y = nullptr;
      if (!top) {
        grad_out = stacked::steps_of(buffer(l), t0, n);
        grad_y = &grad_out;
      } else if (c.tensors[s::grad_outputs] != nullptr) {
        grad_out = stacked::steps_of(stacked::direction_of(*c.tensors[s::grad_outputs], 0), t0, n);
        grad_y = &grad_out;
      }
      lltm_tensor grad_h{}, grad_cell{};
      const lltm_tensor *grad_h_slot = nullptr, *grad_cell_slot = nullptr;
      if (!last) {
        grad_h = carries.h(l, k + 1);
        grad_cell = carries.c(l, k + 1);
        grad_h_slot = &grad_h;
        grad_cell_slot = &grad_cell;
      } else {
        if (c.tensors[s::grad_last_h] != nullptr) {
          grad_h = stacked::state_of(*c.tensors[s::grad_last_h], l, 0);
          grad_h_slot = &grad_h;
        }
        if (c.tensors[s::grad_last_cell] != nullptr) {
          grad_cell = stacked::state_of(*c.tensors[s::grad_last_cell], l, 0);
          grad_cell_slot = &grad_cell;
        }
      }
      const lltm_tensor r = stacked::bytes_at(reserve, at.chunk_reserve_at(l, k, t0),
                                              sequence_reserve_bytes({n, B, F, S}, c.compute, fn));
      const lltm_tensor w = stacked::part(params, at.weights_at(l, 0), {3 * S, S + F});
      const lltm_tensor dw = stacked::part(d_params, at.weights_at(l, 0), {3 * S, S + F});
      const lltm_tensor db = stacked::part(d_params, at.bias_at(l, 0), {3 * S});
      const lltm_tensor h0 = k == 0 ? stacked::state_of(*c.tensors[s::h0], l, 0) : h_before(l, k, t0);
      const lltm_tensor d_h0 = k == 0 ? stacked::state_of(*c.tensors[s::d_h0], l, 0) : carries.h(l, k);
      const lltm_tensor d_c0 = k == 0 ? stacked::state_of(*c.tensors[s::d_c0], l, 0) : carries.c(l, k);
      lltm_tensor d_x{};
      const lltm_tensor* d_x_slot = nullptr;
      if (l > 0) {
        d_x = stacked::steps_of(buffer(l - 1), t0, n);
        d_x_slot = &d_x;
      } else if (c.tensors[s::d_inputs] != nullptr) {
        d_x = stacked::steps_of(*c.tensors[s::d_inputs], t0, n);
        d_x_slot = &d_x;
      }
      // The first chunk a layer runs (its last) writes its gradients as the call asks; the others add to them.
      const uint32_t flags = last ? c.flags & LLTM_ACCUMULATE_PARAM_GRADS : uint32_t(LLTM_ACCUMULATE_PARAM_GRADS);
      OpCall p = stacked::sequence_part(c, LLTM_OP_SEQUENCE_BACKWARD, flags, F, n);
      p.tensors[q::grad_outputs] = grad_y;
      p.tensors[q::grad_last_h] = grad_h_slot;
      p.tensors[q::grad_last_cell] = grad_cell_slot;
      p.tensors[q::reserve] = &r;
      p.tensors[q::inputs] = &x;
      p.tensors[q::weights] = &w;
      p.tensors[q::h0] = &h0;
      p.tensors[q::d_inputs] = d_x_slot;
      p.tensors[q::d_weights] = &dw;
      p.tensors[q::d_bias] = &db;
      p.tensors[q::d_h0] = &d_h0;
      p.tensors[q::d_c0] = &d_c0;
      p.tensors[q::lengths] = nullptr;
      parts.run(p);
      if (l > 0) lanes.signal(int(l));
    }
  }
}

}  // namespace lltm
