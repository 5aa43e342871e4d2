// The tensors of one step call as kernel arguments, shared by the fused and
// the cuBLAS step paths, and the per-element gate gradient both use.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "accessor.h"
#include "math/cell_math.cuh"
#include "math/dtype.cuh"
#include "lltm_args.h"

namespace lltm::cuda {

// The tensors of one call as kernel arguments; I is the accessors' index type.
template <typename T, typename I = int64_t>
struct ForwardTensors {
  Accessor<const T, 2, I> input, weights, old_h, old_cell;
  Accessor<const T, 1, I> bias;
  Accessor<T, 2, I> new_h, new_cell, input_gate, output_gate, candidate_cell, X, gates;
  int B, F, S;
};

template <typename T, typename I = int64_t>
struct BackwardTensors {
  Accessor<const T, 2, I> grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, X, gates, weights;
  Accessor<T, 2, I> d_old_h, d_input, d_weights, d_old_cell;
  Accessor<T, 1, I> d_bias;
  Accessor<const T, 2, I> grad_output;  // added to grad_h where has_grad_output
  int B, F, S;
  bool accumulate;  // add to d_weights and d_bias instead of overwriting them
  bool has_grad_output;
};

template <typename T, typename I = int64_t>
ForwardTensors<T, I> forward_tensors(const ForwardArgs& a) {
  return {accessor<const T, 2, I>(*a.input),    accessor<const T, 2, I>(*a.weights),
          accessor<const T, 2, I>(*a.old_h),    accessor<const T, 2, I>(*a.old_cell),
          accessor1<const T, I>(*a.bias),       accessor<T, 2, I>(*a.new_h),
          accessor<T, 2, I>(*a.new_cell),       accessor<T, 2, I>(*a.input_gate),
          accessor<T, 2, I>(*a.output_gate),    accessor<T, 2, I>(*a.candidate_cell),
          accessor<T, 2, I>(*a.X),              accessor<T, 2, I>(*a.gate_weights),
          int(a.n.batch),                       int(a.n.features),
          int(a.n.state)};
}

template <typename T, typename I = int64_t>
BackwardTensors<T, I> backward_tensors(const BackwardArgs& a) {
  return {accessor<const T, 2, I>(*a.grad_h),      accessor<const T, 2, I>(*a.grad_cell),
          accessor<const T, 2, I>(*a.new_cell),    accessor<const T, 2, I>(*a.input_gate),
          accessor<const T, 2, I>(*a.output_gate), accessor<const T, 2, I>(*a.candidate_cell),
          accessor<const T, 2, I>(*a.X),           accessor<const T, 2, I>(*a.gate_weights),
          accessor<const T, 2, I>(*a.weights),     accessor<T, 2, I>(*a.d_old_h),
          accessor<T, 2, I>(*a.d_input),           accessor<T, 2, I>(*a.d_weights),
          accessor<T, 2, I>(*a.d_old_cell),        accessor1<T, I>(*a.d_bias),
          optional_accessor<const T, 2, I>(a.grad_output),
          int(a.n.batch),                          int(a.n.features),
          int(a.n.state),                          a.accumulate,
          a.grad_output != nullptr};
}

inline bool fits_int32(std::initializer_list<const lltm_tensor*> tensors) {
  for (const lltm_tensor* t : tensors)
    if (!lltm::fits_int32(*t)) return false;
  return true;
}

inline bool fits_int32(const ForwardArgs& a) {
  return fits_int32({a.input, a.weights, a.bias, a.old_h, a.old_cell, a.new_h, a.new_cell, a.input_gate,
                     a.output_gate, a.candidate_cell, a.X, a.gate_weights});
}

inline bool fits_int32(const BackwardArgs& a) {
  return fits_int32({a.grad_h, a.grad_cell, a.new_cell, a.input_gate, a.output_gate, a.candidate_cell, a.X,
                     a.gate_weights, a.weights, a.d_old_h, a.d_input, a.d_weights, a.d_bias, a.d_old_cell}) &&
         (a.grad_output == nullptr || lltm::fits_int32(*a.grad_output));
}

// Gradient of the loss with respect to gate n (before its activation) of
// batch row b (new_h's gradient being grad_h plus grad_output where given);
// d_cell receives the gradient with respect to the new cell of
// state n % S, which is also the old cell's (c' = c + z i). Both are in
// Accumulate<T>: the half types are read as float and computed in float.
// The slopes come from the saved gates and cell as the sequence engine forms
// them (sigmoid_slope, tanh_slope of math/cell_math.cuh): i (1 - i) and
// 1 - tanh(c)^2 lose every digit where the activations saturate.
// Every operand is loaded up front, whatever the gate, so that the loads
// overlap instead of waiting on each other through the branches.
template <typename T, typename I>
__device__ __forceinline__ Accumulate<T> gate_gradient(const BackwardTensors<T, I>& t, int b, int n,
                                                       Accumulate<T>& d_cell) {
  const int gate = n / t.S, s = n % t.S;
  const Accumulate<T> grad_h = widen(t.grad_h[b][s]) + (t.has_grad_output ? widen(t.grad_output[b][s]) : Accumulate<T>(0)),
                      o = widen(t.output_gate[b][s]), cell = widen(t.new_cell[b][s]), i = widen(t.input_gate[b][s]);
  const Accumulate<T> grad_cell = widen(t.grad_cell[b][s]), z = widen(t.candidate_cell[b][s]), g = widen(t.gates[b][n]);
  d_cell = tanh_slope(cell) * o * grad_h + grad_cell;
  if (gate == 1) return tanh_of(cell) * grad_h * sigmoid_slope(g);
  if (gate == 0) return z * d_cell * sigmoid_slope(g);
  return i * d_cell * elu_derivative(g);
}

}  // namespace lltm::cuda
