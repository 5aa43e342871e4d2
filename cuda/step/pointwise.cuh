// The step's element-wise kernels around its products, shared by the cuBLAS
// path (step/cublas.cu) and the half-type path (step/half.cu): the cat of
// old_h and the input before the product, the activations after it, and
// the gate gradients before the backward's products. Values of the half
// types are computed in float (Accumulate<T>) and rounded once when stored.
#pragma once

#include <cstdint>

#include "math/dtype.cuh"
#include "math/shape4.cuh"
#include "step/tensors.cuh"

namespace lltm::cuda {

// The epilogue of the forward pass for one (b, s): g* include the bias.
template <typename T>
__device__ __forceinline__ void write_cell(const ForwardTensors<T>& t, int b, int s, Accumulate<T> g0,
                                           Accumulate<T> g1, Accumulate<T> g2) {
  using A = Accumulate<T>;
  t.gates[b][s] = RoundTo<T>::from(g0);
  t.gates[b][t.S + s] = RoundTo<T>::from(g1);
  t.gates[b][2 * t.S + s] = RoundTo<T>::from(g2);
  const A i = sigmoid(g0), o = sigmoid(g1);
  const A z = elu(g2);
  const A cell = widen(t.old_cell[b][s]) + z * i;
  t.input_gate[b][s] = RoundTo<T>::from(i);
  t.output_gate[b][s] = RoundTo<T>::from(o);
  t.candidate_cell[b][s] = RoundTo<T>::from(z);
  t.new_cell[b][s] = RoundTo<T>::from(cell);
  t.new_h[b][s] = RoundTo<T>::from(tanh_of(cell) * o);
}

// X = cat(old_h, input) into a contiguous buffer (and into the X output when that is another buffer).
template <typename T>
__global__ void cat_kernel(ForwardTensors<T> t, T* Xc, bool also_output) {
  const int K = t.S + t.F;
  const int64_t n = int64_t(t.B) * K;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const RowCol at = row_col(e, n, K);
    const int b = int(at.row), k = at.col;
    const T v = k < t.S ? t.old_h[b][k] : t.input[b][k - t.S];
    Xc[e] = v;
    if (also_output) t.X[b][k] = v;
  }
}

// Bias and activations after the product Gc = X W^T (contiguous [B, 3S], of
// type TG: T, or float for the half types).
template <typename T, typename TG>
__global__ void forward_pointwise(ForwardTensors<T> t, const TG* Gc) {
  const int64_t n = int64_t(t.B) * t.S;
  const int G = 3 * t.S;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const RowCol at = row_col(e, n, t.S);
    const int b = int(at.row), s = at.col;
    const TG* g = Gc + int64_t(b) * G;
    auto gate = [&](int k) { return Accumulate<T>(widen(g[k])) + widen(t.bias[k]); };
    write_cell(t, b, s, gate(s), gate(t.S + s), gate(2 * t.S + s));
  }
}

// dG into a contiguous [B, 3S] buffer, and d_old_cell.
// One batch row per grid row (blockIdx.y), so no 64-bit division per element.
template <typename T>
__global__ void backward_pointwise(BackwardTensors<T> t, T* dG) {
  const int G = 3 * t.S;
  for (int b = blockIdx.y; b < t.B; b += gridDim.y)
    for (int g = blockIdx.x * blockDim.x + threadIdx.x; g < G; g += gridDim.x * blockDim.x) {
      Accumulate<T> d_cell;
      dG[int64_t(b) * G + g] = RoundTo<T>::from(gate_gradient(t, b, g, d_cell));
      if (g < t.S) t.d_old_cell[b][g] = RoundTo<T>::from(d_cell);
    }
}

}  // namespace lltm::cuda
