// The half types' step as three launches each way: the forward's cat,
// product and activations; the backward's gate gradients and its products.
// The gates stay in float32 between the forward's product and their
// activations (gemm_widened), so that only stored values are rounded.
#include "step/half.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "math/dtype.cuh"
#include "math/gemm.h"
#include "runtime/kernel_choice.h"
#include "runtime/launch.h"
#include "step/pointwise.cuh"
#include "step/tensors.cuh"

namespace lltm::cuda {

namespace {

// Columns [first, first + count) of m.
template <typename T>
Matrix<T> columns(Matrix<T> m, int64_t first, int64_t count) {
  return {m.data + first * m.cs, m.rows, count, m.rs, m.cs};
}

// The half types' products ignore the float32 precision setting.
GemmEngine half_engine(const DeviceState& dev) {
  return gemm_engine(dev, use_own_gemm(), LLTM_MATMUL_PRECISION_HIGHEST);
}

}  // namespace

template <typename T>
void half_forward(const ForwardArgs& a, DeviceState& dev) {
  const int64_t B = a.n.batch, S = a.n.state, K = S + a.n.features, G = 3 * S;
  const ForwardTensors<T> t = forward_tensors<T>(a);
  // X: the output itself when the product can read it as it is, else a contiguous copy beside it.
  const bool x_direct = is_contiguous(*a.X);
  Scratch x_scratch(x_direct ? 0 : size_t(B * K) * sizeof(T));
  T* Xc = x_direct ? static_cast<T*>(a.X->data) : x_scratch.as<T>();
  launch("cat_kernel", cat_kernel<T>, dim3(grid_blocks(B * K)), dim3(kBlockThreads), 0, dev.stream, t, Xc, !x_direct);
  Scratch gates(size_t(B * G) * sizeof(float));
  gemm_widened(half_engine(dev), row_major<const T>(Xc, B, K), matrix<const T>(*a.weights).transposed(),
               row_major(gates.as<float>(), B, G), 0.0f);
  launch("forward_pointwise", forward_pointwise<T, float>, dim3(grid_blocks(B * S)), dim3(kBlockThreads), 0,
         dev.stream, t, gates.as<const float>());
}

template <typename T>
void half_backward(const BackwardArgs& a, DeviceState& dev) {
  const int64_t B = a.n.batch, S = a.n.state, F = a.n.features, G = 3 * S;
  const BackwardTensors<T> t = backward_tensors<T>(a);
  const GemmEngine engine = half_engine(dev);
  Scratch d_gates(size_t(B * G) * sizeof(T));
  launch("backward_pointwise", backward_pointwise<T>, dim3(grid_blocks(G), grid_rows(B)), dim3(kBlockThreads), 0,
         dev.stream, t, d_gates.as<T>());
  const Matrix<const T> dG = row_major<const T>(d_gates.as<T>(), B, G);
  column_sums<T>(dev.stream, dG, t.d_bias.data, t.d_bias.stride, a.accumulate);
  // d_weights [3S, K] = dG^T [3S, B] X [B, K]; dX [B, K] = dG W, whose column blocks are d_old_h and d_input.
  gemm_any_strides<T>(engine, dG.transposed(), matrix<const T>(*a.X), matrix<T>(*a.d_weights), a.accumulate);
  const Matrix<const T> W = matrix<const T>(*a.weights);
  gemm_any_strides<T>(engine, dG, columns(W, 0, S), matrix<T>(*a.d_old_h), false);
  gemm_any_strides<T>(engine, dG, columns(W, S, F), matrix<T>(*a.d_input), false);
}

template void half_forward<__nv_bfloat16>(const ForwardArgs&, DeviceState&);
template void half_forward<__half>(const ForwardArgs&, DeviceState&);
template void half_backward<__nv_bfloat16>(const BackwardArgs&, DeviceState&);
template void half_backward<__half>(const BackwardArgs&, DeviceState&);

}  // namespace lltm::cuda
