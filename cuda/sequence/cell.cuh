// What the sequence engine's two recurrences share: the tensors of a pass as
// kernel arguments, the saved state's layout, and the per-element work of a
// step (the cell update after the gate sums, the gate gradients before the
// recurrent product), used alike by the persistent kernels and the per-step
// kernels of the graph path.
#pragma once

#include <cstdint>

#include "accessor.h"
#include "math/cell_math.cuh"

namespace lltm::cuda {

// The saved state: kReservePlanes planes of [T, B, S], in this order. Plane
// kPlaneH holds at step t the h that step reads, h_{t-1} (h0 at step 0), so
// that the recurrent weights' gradient is one product over all T * B rows.
// The three gate sums (before their activations) and the new cell follow:
// the backward takes the slopes from these arguments (sigmoid_slope,
// tanh_slope), which stay accurate where the activations saturate, as the
// activated values would not. 5 planes, the reserve size the ABI promises.
enum ReservePlane { kPlaneH, kPlaneGate0, kPlaneGate1, kPlaneGate2, kPlaneCell, kReservePlanes };

// Each sample's number of steps (int32 [B], checked to lie in [1, T] before
// a pass runs), or T for every sample where data is null. From a sample's
// length on, the forward carries its state and writes zero outputs; the
// backward gives those steps no gradient and adds grad_last_h at the
// sample's own last step.
struct SampleLengths {
  const int32_t* data;
  int64_t stride;
  __host__ __device__ int of(int b, int steps) const { return data != nullptr ? data[b * stride] : steps; }
};

template <typename T>
struct SequenceForwardTensors {
  const T* gin;  // [T * B, 3S]: each step's x_t W_x^T, without the bias (the graph path adds h W_h^T in place)
  Accessor<const T, 1> bias;
  Accessor<const T, 2> weights, h0, c0;
  Accessor<T, 3> outputs;
  Accessor<T, 2> last_h, last_cell;
  T* reserve;   // [kReservePlanes, T, B, S], or null when nothing is kept (inference)
  T* h_buffer;  // inference: [2, B, S], step t's h in slot t % 2
  T* cell;      // [B, S]: the cell between steps
  int steps, B, S;
  SampleLengths lengths;

  __host__ __device__ T* plane(int which, int64_t t) const { return reserve + (int64_t(which) * steps + t) * B * S; }
  // Step t's h as a contiguous [B, S] matrix, for step t + 1 < T to read.
  __host__ __device__ T* h_of(int64_t t) const {
    return reserve != nullptr ? plane(kPlaneH, t + 1) : h_buffer + (t & 1) * int64_t(B) * S;
  }
};

template <typename T>
struct SequenceBackwardTensors {
  Accessor<const T, 3> grad_outputs;
  Accessor<const T, 2> grad_last_h, grad_last_cell, weights;
  bool has_grad_outputs, has_grad_last_h, has_grad_last_cell;
  const T* reserve;
  T* dG;  // [T * B, 3S]: every step's gate gradients
  T* dh;  // [B, S]: h_{t-1}'s gradient through the recurrence, from step t
  T* dc;  // [B, S]: the cell's gradient between steps
  Accessor<T, 2> d_h0, d_c0;
  int steps, B, S;
  SampleLengths lengths;
  // dG gate-major ([3S, T * B]) rather than row-major, so that the products
  // after the recurrence reduce over contiguous rows, the operand layout
  // TF32 tensor-core GEMMs take (engine.cu): only the tensor-core backward
  // writes it so, from its tile of gate gradients in shared memory, a gate's
  // rows together (persistent_backward says whether it ran).
  bool dG_by_gate = false;
  // [B, 3S] (or nullptr): where the kernel adds up, row by row, every step's
  // gate gradients, so that the bias's gradient is a sum over B rows rather
  // than over T * B (only the tensor-core cluster backward writes it).
  T* bias_rows = nullptr;

  __host__ __device__ const T* plane(int which, int64_t t) const {
    return reserve + (int64_t(which) * steps + t) * B * S;
  }
};

// A cell update's results: the new cell and h (for kernels that keep them on
// chip between steps).
template <typename T>
struct CellUpdate {
  T cell, h;
};

// The new cell and h from the gates and the old cell.
template <typename T>
__device__ __forceinline__ CellUpdate<T> cell_update(T i, T o, T z, T old_cell) {
  const T cell = old_cell + z * i;
  return {cell, tanh_of(cell) * o};
}

// Where a cell update of state s, row b, step t goes: the output (zero past
// the sample's length, `live` false), the next cell (or the last h and
// cell), h for the next step and the saved cell.
template <typename T>
__device__ __forceinline__ void store_cell(const SequenceForwardTensors<T>& p, int t, int b, int s,
                                           const CellUpdate<T>& u, bool live) {
  const int64_t e = int64_t(b) * p.S + s;
  p.outputs[t][b][s] = live ? u.h : T(0);
  if (t + 1 == p.steps) {
    p.last_h[b][s] = u.h;
    p.last_cell[b][s] = u.cell;
  } else {
    p.cell[e] = u.cell;
  }
  if (p.reserve != nullptr) p.plane(kPlaneCell, t)[e] = u.cell;
  if (t + 1 < p.steps) p.h_of(t)[e] = u.h;
}

// The h step t reads (h_{t-1}; h0 at step 0).
template <typename T>
__device__ __forceinline__ T old_h_of(const SequenceForwardTensors<T>& p, int t, int b, int s) {
  // Past L1: other threads wrote it in the step before.
  return t == 0 ? p.h0[b][s] : __ldcg(p.h_of(t - 1) + int64_t(b) * p.S + s);
}

// The cell update of state s, row b, step t once its gates are known,
// stored; past the sample's length, its state carried instead. Returns the
// state stored, for a caller that keeps the cell in a register.
template <typename T>
__device__ __forceinline__ CellUpdate<T> finish_cell(const SequenceForwardTensors<T>& p, int t, int b, int s, T i,
                                                     T o, T z, T old_cell) {
  const bool live = t < p.lengths.of(b, p.steps);
  const CellUpdate<T> u = live ? cell_update(i, o, z, old_cell) : CellUpdate<T>{old_cell, old_h_of(p, t, b, s)};
  store_cell(p, t, b, s, u, live);
  return u;
}

// Step 0's entry of the saved h plane: h0 itself.
template <typename T>
__device__ __forceinline__ void save_h0(const SequenceForwardTensors<T>& p, int b, int s) {
  if (p.reserve != nullptr) p.plane(kPlaneH, 0)[int64_t(b) * p.S + s] = p.h0[b][s];
}

template <typename T>
__device__ __forceinline__ T old_cell_of(const SequenceForwardTensors<T>& p, int t, int b, int s) {
  return t == 0 ? p.c0[b][s] : p.cell[int64_t(b) * p.S + s];
}

// What the gate gradients of one element read that no other work of the
// pass writes (the saved gate sums and cell, and the output's gradient):
// loadable ahead, while a grid barrier is pending.
template <typename T>
struct SavedCell {
  T g0, g1, g2, cell, grad_output;
};

template <typename T>
__device__ __forceinline__ SavedCell<T> load_saved(const SequenceBackwardTensors<T>& p, int t, int b, int s) {
  const int64_t e = int64_t(b) * p.S + s;
  return {__ldg(p.plane(kPlaneGate0, t) + e), __ldg(p.plane(kPlaneGate1, t) + e),
          __ldg(p.plane(kPlaneGate2, t) + e), __ldg(p.plane(kPlaneCell, t) + e),
          p.has_grad_outputs ? p.grad_outputs[t][b][s] : T(0)};
}

// One element's gate gradients and the cell's gradient on to the step before.
template <typename T>
struct CellGradients {
  T d0, d1, d2, d_cell;
};

// The step backward's formulas (gate_gradient in step/tensors.cuh), the
// activations recomputed from the saved gates and cell; grad_h and grad_cell are the
// gradients that reach h and the cell of this step from later ones (and from
// the last h and cell's own gradients).
template <typename T>
__device__ __forceinline__ CellGradients<T> cell_gradients(const SavedCell<T>& v, T grad_h, T grad_cell) {
  grad_h += v.grad_output;
  const T i = sigmoid(v.g0), o = sigmoid(v.g1), z = elu(v.g2), th = tanh_of(v.cell);
  const T d_cell = tanh_slope(v.cell) * o * grad_h + grad_cell;
  return {z * d_cell * sigmoid_slope(v.g0), th * grad_h * sigmoid_slope(v.g1), i * d_cell * elu_derivative(v.g2),
          d_cell};
}

// Step t's gradients of a sample of `length` steps: none past its length
// (the cell's gradient passes unchanged), grad_last_h joining grad_h at its
// last step.
template <typename T>
__device__ __forceinline__ CellGradients<T> sample_gradients(const SavedCell<T>& v, int t, int length, T grad_h,
                                                             T grad_cell, T grad_last_h) {
  if (t >= length) return {T(0), T(0), T(0), grad_cell};
  return cell_gradients(v, t + 1 == length ? grad_h + grad_last_h : grad_h, grad_cell);
}

// The gradients that reach the last step's h and cell from outside the sequence.
template <typename T>
__device__ __forceinline__ T last_grad_h(const SequenceBackwardTensors<T>& p, int b, int s) {
  return p.has_grad_last_h ? p.grad_last_h[b][s] : T(0);
}

template <typename T>
__device__ __forceinline__ T last_grad_cell(const SequenceBackwardTensors<T>& p, int b, int s) {
  return p.has_grad_last_cell ? p.grad_last_cell[b][s] : T(0);
}

// The gate gradients of state s, row b, step t into dG (unless gate-major,
// which the caller stores), and the cell's gradient on to step t - 1 (d_c0
// at t = 0); returns them too, for a caller that stores them elsewhere as well.
template <typename T>
__device__ __forceinline__ CellGradients<T> backward_cell(const SequenceBackwardTensors<T>& p, int t, int b, int s,
                                                          const SavedCell<T>& v) {
  const int64_t e = int64_t(b) * p.S + s;
  const bool last = t + 1 == p.steps;
  const int length = p.lengths.of(b, p.steps);
  const CellGradients<T> d = sample_gradients(v, t, length, last ? T(0) : p.dh[e],
                                              last ? last_grad_cell(p, b, s) : p.dc[e],
                                              t + 1 == length ? last_grad_h(p, b, s) : T(0));
  if (!p.dG_by_gate) {
    T* dg = p.dG + (int64_t(t) * p.B + b) * 3 * p.S;
    dg[s] = d.d0;
    dg[p.S + s] = d.d1;
    dg[2 * p.S + s] = d.d2;
  }
  if (t == 0)
    p.d_c0[b][s] = d.d_cell;
  else
    p.dc[e] = d.d_cell;
  return d;
}

}  // namespace lltm::cuda
