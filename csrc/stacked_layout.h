// Where the stacked ops (LLTM_OP_STACKED_FORWARD and _BACKWARD) keep each
// layer's part: its weights and bias in params (and d_params), its reserve
// and its outputs in the reserve. One place for the checks and for every
// backend's passes.
#pragma once

#include <cstdint>
#include <string>

#include "lltm_args.h"
#include "op_call.h"
#include "status.h"

namespace lltm {

// The reserve's parts start at multiples of this many bytes.
constexpr uint64_t kStackedReserveAlign = 256;

struct StackedLayout {
  int64_t layers, steps, batch, features, state;
  int64_t align;      // params' parts start at multiples of this many elements
  uint64_t reserve;   // bytes of one layer's sequence reserve, rounded up to kStackedReserveAlign
  uint64_t outputs;   // bytes kept of one layer's outputs, likewise

  // The sizes of a stacked call (its T, B, F, L and S, its `align` scalar, its compute type for the reserve).
  static StackedLayout of(const OpCall& c, int64_t align, const char* fn);

  int64_t features_of(int64_t l) const { return l == 0 ? features : state; }
  // Element offsets in params: layer l's weights [3S, S+F_l], then its bias [3S].
  int64_t weights_at(int64_t l) const;
  int64_t bias_at(int64_t l) const { return round_up(weights_at(l) + 3 * state * (state + features_of(l))); }
  // Elements params holds (to the end of the last bias).
  int64_t params() const { return bias_at(layers - 1) + 3 * state; }
  // Byte offsets in the reserve: layer l's sequence reserve, and (l < L - 1) its outputs.
  uint64_t reserve_at(int64_t l) const { return uint64_t(l) * reserve; }
  uint64_t outputs_at(int64_t l) const { return uint64_t(layers) * reserve + uint64_t(l) * outputs; }
  uint64_t reserve_bytes() const { return uint64_t(layers) * reserve + uint64_t(layers - 1) * outputs; }

 private:
  int64_t round_up(int64_t n) const { return (n + align - 1) / align * align; }
};

inline StackedLayout StackedLayout::of(const OpCall& c, int64_t align, const char* fn) {
  const int64_t L = c.size('L'), T = c.size('T'), B = c.size('B'), F = c.size('F'), S = c.size('S');
  // Bounds under which every offset below fits in 63 bits (the weights of a layer are 3S(S+F) elements).
  constexpr int64_t kMaxSize = int64_t(1) << 28, kMaxLayers = int64_t(1) << 20;
  if (S > kMaxSize || F > kMaxSize || L > kMaxLayers)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": S and F must each be at most 2^28 and L at most 2^20, got S = " +
                                        std::to_string(S) + ", F = " + std::to_string(F) + ", L = " + std::to_string(L));
  const uint64_t wide = uint64_t(element_size(c.compute));
  const uint64_t reserve = sequence_reserve_bytes({T, B, F, S}, c.compute, fn);
  auto rounded = [](uint64_t n) { return (n + kStackedReserveAlign - 1) / kStackedReserveAlign * kStackedReserveAlign; };
  // T*B*S*wide is below the sequence reserve, which fit.
  return {L, T, B, F, S, align, rounded(reserve), rounded(uint64_t(T) * uint64_t(B) * uint64_t(S) * wide)};
}

inline int64_t StackedLayout::weights_at(int64_t l) const {
  if (l == 0) return 0;
  // Layer 0's part, then l - 1 deeper layers' parts of one size each.
  const int64_t first = round_up(round_up(3 * state * (state + features)) + 3 * state);
  const int64_t deep = round_up(round_up(3 * state * 2 * state) + 3 * state);
  return first + (l - 1) * deep;
}

}  // namespace lltm
