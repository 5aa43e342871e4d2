// The cell's pointwise math, forward and backward, for one element or one
// vector of elements (F float, double or FloatVector), shared by the kernels
// of every storage type.
#pragma once

#include "cell_slopes.h"
#include "vector_math.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

// The cell's pointwise math for one element, or one vector of elements when
// F is a vector type (float32 rows with unit stride).
template <typename F>
struct CellForward {
  F i, o, z, cell, h;
};

template <typename F>
inline CellForward<F> cell_forward(F g0, F g1, F g2, F old_cell) {
  CellForward<F> r;
  r.i = sigmoid(g0);
  r.o = sigmoid(g1);
  r.z = elu(g2);
  r.cell = old_cell + r.z * r.i;
  r.h = tanh(r.cell) * r.o;
  return r;
}

template <typename F>
struct CellBackward {
  F d_cell, d_i, d_o, d_z;
};

// The slopes come from the saved gates and cell in the sequence engine's
// forms (cell_slopes.h): i (1 - i) and 1 - tanh(c)^2 lose every digit where
// the activations saturate (i rounds to 1 once g0 passes ~37 in float64).
template <typename F>
inline CellBackward<F> cell_backward(F grad_h, F grad_cell, F cell, F i, F o, F z, F g0, F g1, F g2) {
  const Tanh<F> t = tanh_of<true>(cell);
  CellBackward<F> r;
  r.d_cell = t.d * o * grad_h + grad_cell;
  r.d_i = z * r.d_cell * sigmoid_slope_of(g0, i);
  r.d_o = t.t * grad_h * sigmoid_slope_of(g1, o);
  r.d_z = i * r.d_cell * elu_grad(g2);
  return r;
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
