// Where the stacked ops (LLTM_OP_STACKED_FORWARD and _BACKWARD) keep each
// layer's and direction's part: its weights and bias in params (and
// d_params), its reserve, and each layer's outputs in the reserve. One place for the checks and for every
// backend's passes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "lltm_args.h"
#include "op_call.h"
#include "status.h"

namespace lltm {

// The reserve's parts start at multiples of this many bytes.
constexpr uint64_t kStackedReserveAlign = 256;

// A one-direction stack of two or more layers may run as a wavefront
// (stacked_wavefront.h): each layer's sequence in up to this many chunks of
// steps, layer l's chunk k beside layer l - 1's chunk k + 1. The reserve has
// room for it whichever backend runs the call, so that its size depends on
// the sizes alone.
constexpr int64_t kMaxWavefrontChunks = 8;

struct StackedLayout {
  int64_t layers, directions, steps, batch, features, state;
  int64_t align;      // params' parts start at multiples of this many elements
  uint64_t reserve;   // bytes of one layer's sequence reserve in one direction, rounded up to kStackedReserveAlign
  uint64_t outputs;   // bytes kept of one layer's outputs (every direction's), likewise
  uint64_t reversed;  // with two directions, bytes of the first layer's input reversed (deeper layers': `outputs`)
  uint64_t boundary;  // where a wavefront may run: bytes of the last layer's h at a chunk's last step ([B, S])
  uint64_t element_bytes;  // of the compute type

  // Whether the layout has room for a wavefront (one direction, two or more layers).
  bool wavefront() const { return directions == 1 && layers > 1; }

  // The sizes of a stacked call (its T, B, F, L, D and S, its `align` scalar, its compute type for the reserve).
  static StackedLayout of(const OpCall& c, int64_t align, const char* fn);

  // Layer l's input features: F, then every direction's outputs of the layer below.
  int64_t features_of(int64_t l) const { return l == 0 ? features : directions * state; }
  // Element offsets in params: direction d's layer l's weights [3S, S+F_l], then its bias [3S].
  int64_t weights_at(int64_t l, int64_t d) const;
  int64_t bias_at(int64_t l, int64_t d) const {
    return round_up(weights_at(l, d) + 3 * state * (state + features_of(l)));
  }
  // Elements params holds (to the end of the last bias).
  int64_t params() const { return bias_at(layers - 1, directions - 1) + 3 * state; }
  // Byte offsets in the reserve: layer l's sequence reserve in direction d, (l < L - 1) its outputs, and with two
  // directions its input reversed, which the second direction reads in both passes (and the weight gradients
  // after the backward returns, runtime/side_work.h on CUDA, so no later part may overwrite it).
  // (U: the sums' type; 128 bits for reserve_fits.)
  uint64_t reserve_at(int64_t l, int64_t d) const { return uint64_t(l * directions + d) * reserve; }
  template <typename U = uint64_t>
  U outputs_at(int64_t l) const {
    return U(layers * directions) * U(reserve) + U(l) * U(outputs);
  }
  template <typename U = uint64_t>
  U reversed_at(int64_t l) const {
    return outputs_at<U>(layers - 1) + (l == 0 ? U(0) : U(reversed) + U(l - 1) * U(outputs));
  }
  // Where a wavefront runs, the sequence reserve of layer l's chunk k, from step t0: aligned, after chunk k - 1's
  // (whose t0 steps' reserve and under k alignments' padding end before t0 steps and k + 1 alignments; `reserve`
  // has room for kMaxWavefrontChunks alignments), and the last layer's h at the last step of chunk k - 1,
  // 0 < k < kMaxWavefrontChunks, which that layer's chunk k reads as its h0.
  uint64_t chunk_reserve_at(int64_t l, int64_t k, int64_t t0) const {
    const uint64_t step = uint64_t(batch * 5 * state) * element_bytes;
    const uint64_t at = uint64_t(t0) * step + uint64_t(k) * kStackedReserveAlign;
    return reserve_at(l, 0) + (at + kStackedReserveAlign - 1) / kStackedReserveAlign * kStackedReserveAlign;
  }
  uint64_t boundary_at(int64_t k) const { return outputs_at(layers - 1) + uint64_t(k - 1) * boundary; }
  template <typename U = uint64_t>
  U reserve_bytes() const {
    if (directions == 2) return reversed_at<U>(layers - 1) + U(layers == 1 ? reversed : outputs);
    return outputs_at<U>(layers - 1) + (wavefront() ? U(kMaxWavefrontChunks - 1) * U(boundary) : U(0));
  }
  // Whether reserve_bytes() (and so every offset in the reserve) fits in 64 bits: the same sums in 128, where
  // the parts (each under 2^64, a few of each per layer and direction) cannot overflow.
  bool reserve_fits() const { return reserve_bytes<unsigned __int128>() <= UINT64_MAX; }

 private:
  int64_t round_up(int64_t n) const { return (n + align - 1) / align * align; }
};

inline StackedLayout StackedLayout::of(const OpCall& c, int64_t align, const char* fn) {
  const int64_t L = c.size('L'), D = c.size('D'), T = c.size('T'), B = c.size('B'), F = c.size('F'), S = c.size('S');
  if (D > 2)
    fail(LLTM_ERR_SHAPE_MISMATCH, std::string(fn) + ": h0 holds D = " + std::to_string(D) +
                                      " directions ([L, D, B, S]); expected 1 or 2");
  // Every offset below fits in 63 bits when the L D parts (a layer's weights are 3S(S+F_l) elements, its bias
  // 3S, each padded by under `align`) do, with room to spare.
  const double part =
      3.0 * double(S) * (double(S) + double(std::max(F, D * S))) + 3.0 * double(S) + 2.0 * double(align);
  if (double(L) * double(D) * part > 0x1p62)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": the parameters of L = " + std::to_string(L) +
                                        " layers in D = " + std::to_string(D) + " directions of S = " +
                                        std::to_string(S) + " on F = " + std::to_string(F) +
                                        " features do not fit in 62 bits of elements");
  const uint64_t wide = uint64_t(element_size(c.compute));
  const uint64_t reserve = sequence_reserve_bytes({T, B, F, S}, c.compute, fn);
  auto rounded = [](uint64_t n) {
    return (n + kStackedReserveAlign - 1) / kStackedReserveAlign * kStackedReserveAlign;
  };
  const bool wavefront = D == 1 && L > 1;
  // T*B*S*wide is below the sequence reserve, which fit; twice that too; T*B*F is the inputs' elements. The
  // wavefront's padding and boundaries are a few kilobytes beside them.
  return {L,
          D,
          T,
          B,
          F,
          S,
          align,
          rounded(reserve) + (wavefront ? uint64_t(kMaxWavefrontChunks) * kStackedReserveAlign : 0),
          rounded(uint64_t(T) * uint64_t(B) * uint64_t(D * S) * wide),
          D == 2 ? rounded(uint64_t(T) * uint64_t(B) * uint64_t(F) * wide) : 0,
          wavefront ? rounded(uint64_t(B) * uint64_t(S) * wide) : 0,
          wide};
}

inline int64_t StackedLayout::weights_at(int64_t l, int64_t d) const {
  // Per direction: layer 0's part, then L - 1 deeper layers' parts of one size each.
  const int64_t first = round_up(round_up(3 * state * (state + features)) + 3 * state);
  const int64_t deep = round_up(round_up(3 * state * (state + directions * state)) + 3 * state);
  return d * (first + (layers - 1) * deep) + (l == 0 ? 0 : first + (l - 1) * deep);
}

}  // namespace lltm
