// The pointwise math of one sequence step for a group of units of one row,
// shared by the CPU sequence engines (sequence_cpu.cpp in the call's type,
// sequence_bf16.cpp in float32 over bfloat16 storage), so that both keep the
// same reserve: per step and row the gate factors [3S], the slope of h
// through the cell [S] and h_t [S].
#pragma once

#include <cstdint>

#include "cell_slopes.h"
#include "vector_math.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

// acc0..2 are the recurrent sums of the three gates, gx the input sums
// (+ bias) at the gate-0 position of the row (gates S apart). Training
// (Keep) stores the backward's factors in place of gx, z sigma'(g0),
// tanh(c) sigma'(g1) and i elu'(g2), and o tanh'(c) in `slope`, so that the
// backward loop only multiplies.
template <bool Keep, typename F, typename T>
inline void forward_unit(const T* acc0, const T* acc1, const T* acc2, T* gx, int64_t S, T* cell, T* h, T* slope) {
  const Gates<F> g = gates<Keep>(load<F>(acc0) + load<F>(gx), load<F>(acc1) + load<F>(gx + S),
                                 load<F>(acc2) + load<F>(gx + 2 * S));
  const F c = load<F>(cell) + g.z * g.i;
  const Tanh<F> t = tanh_of<Keep>(c);
  store(cell, c);
  store(h, t.t * g.o);
  if (Keep) {
    store(gx, g.z * g.d_i);
    store(gx + S, t.t * g.d_o);
    store(gx + 2 * S, g.i * g.d_z);
    store(slope, g.o * t.d);
  }
}

// The gradients of the three gates' sums.
template <typename F>
struct GateGradients {
  F i, o, z;
};

// The gradient of one step: from dh (of h_t) and the carried dc (of c_t,
// replaced by that of c_{t-1}) to the gate gradients, with the factors
// forward_unit kept (gates S apart).
template <typename F, typename T>
inline GateGradients<F> backward_unit(F dh, const T* factors, const T* slope, int64_t S, T* dc) {
  const F d_cell = load<F>(slope) * dh + load<F>(dc);
  store(dc, d_cell);
  return {load<F>(factors) * d_cell, load<F>(factors + S) * dh, load<F>(factors + 2 * S) * d_cell};
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
