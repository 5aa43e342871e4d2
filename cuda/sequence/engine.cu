// The sequence engine's passes: the products over all steps at once around
// the recurrence, and the choice of recurrence (see runtime/kernel_choice.h).
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "dispatch.h"
#include "math/float32_copies.h"
#include "math/gemm.h"
#include "math/strided.h"
#include "ops/dtypes.h"
#include "runtime/device.h"
#include "runtime/kernel_choice.h"
#include "runtime/lanes.h"
#include "runtime/side_work.h"
#include "sequence/cluster/cluster.h"
#include "sequence/engine.h"
#include "sequence/graph/graph.h"
#include "sequence/lengths.cuh"
#include "sequence/persistent/persistent.h"
#include "sequence/weight_gradients.h"

namespace lltm::cuda {

namespace {

// A [T, B, N] tensor as one [T * B, N] matrix, when its rows are evenly spaced.
template <typename T>
bool rows_of(const lltm_tensor& t, Matrix<T>& m) {
  const int64_t steps = t.sizes[0], B = t.sizes[1];
  int64_t rs;
  if (steps == 1)
    rs = t.strides[1];
  else if (B == 1)
    rs = t.strides[0];
  else if (t.strides[0] == B * t.strides[1])
    rs = t.strides[1];
  else
    return false;
  m = {static_cast<T*>(t.data), steps * B, t.sizes[2], rs, t.strides[2]};
  return true;
}

// A [T, B, N] input as a [T * B, N] matrix: the tensor itself where its
// rows are evenly spaced, else a contiguous copy that `copy` owns.
template <typename T>
struct InputRows {
  Matrix<const T> m;
  std::unique_ptr<Scratch> copy;
};

template <typename T>
InputRows<T> input_rows(const lltm_tensor& t, int32_t dtype, cudaStream_t stream) {
  InputRows<T> r;
  if (rows_of(t, r.m)) return r;
  r.copy = std::make_unique<Scratch>(size_t(numel(t)) * sizeof(T));
  strided_copy(contiguous_like(t, r.copy->template as<void>()), t, dtype, stream);
  r.m = row_major<const T>(r.copy->template as<T>(), t.sizes[0] * t.sizes[1], t.sizes[2]);
  return r;
}

// The kernels count steps, rows and states in int, with products such as
// 3S and B times a block's states: sizes up to 2^28 keep every one in range.
void check_sizes(const SequenceSizes& n, const char* fn) {
  constexpr int64_t kMax = int64_t(1) << 28;
  if (n.steps > kMax || n.batch > kMax || n.features > kMax || n.state > kMax)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": T, B, F and S must each be at most 2^28 on CUDA, got T = " +
                                        std::to_string(n.steps) + ", B = " + std::to_string(n.batch) + ", F = " +
                                        std::to_string(n.features) + ", S = " + std::to_string(n.state));
}

// Whether the products over all T * B rows (the input projection, d_inputs
// and d_weights) take bfloat16 copies of their operands: at half_products'
// precision on the graph path, whose sizes make the products large enough to
// pay for the copies.
template <typename T>
bool big_half_products(const SequenceKernels& kernels, const GemmEngine& engine) {
  return kernels.recurrence == Recurrence::kGraph && half_products<T>(engine);
}

// The bytes a matrix's elements span.
template <typename T>
Span matrix_span(const Matrix<const T>& m) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(m.data);
  return {begin, begin + uintptr_t(((m.rows - 1) * m.rs + (m.cols - 1) * m.cs + 1) * int64_t(sizeof(T)))};
}

template <typename M>
M oriented(const M& m, bool transposed) {
  return transposed ? m.transposed() : m;
}

// out = a' b' + beta out, a product over all T * B rows (a' being a, or its
// transpose where ta says so, likewise b'): through bfloat16 copies of a and b
// where `half` (big_half_products), a's being `a_copy` where the caller made
// it already, so that one copy serves several products.
template <typename T>
void rows_product(const GemmEngine& engine, cudaStream_t stream, bool half, Matrix<const T> a, bool ta,
                  Matrix<const T> b, bool tb, Matrix<T> out, T beta, const Bfloat16Copy* a_copy = nullptr) {
  if constexpr (std::is_same_v<T, float>) {
    if (half) {
      std::optional<Bfloat16Copy> own;
      if (a_copy == nullptr) a_copy = &own.emplace(bfloat16_copy(stream, a));
      const Bfloat16Copy b_copy = bfloat16_copy(stream, b);
      return gemm_widened(engine, oriented(a_copy->m, ta), oriented(b_copy.m, tb), out, beta);
    }
  }
  gemm<T>(engine, oriented(a, ta), oriented(b, tb), out, beta);
}

// The recurrent product's rounding at the call's float32 precision: bfloat16
// operands where half_products allows them, else TF32 where tf32_products does.
template <typename T>
RecurrentProducts recurrent_products(int32_t float32_precision) {
  if (half_products<T>(float32_precision)) return RecurrentProducts::kBfloat16;
  return tf32_products<T>(float32_precision) ? RecurrentProducts::kTf32 : RecurrentProducts::kExact;
}

// Side work from which on a TF32 backward recurrence takes the clusters
// rather than the grid kernel: 1 GFLOP, a product over all T * B rows of a
// layer of a few hundred states (a char LM's 2 x 6400 x 1536 x 1024 is 20).
constexpr double kHalfDeviceSideFlops = 1e9;

template <typename T>
SequenceKernels choose(int64_t S, int64_t B, RecurrentProducts products) {
  return choose_sequence_kernels([&] { return cluster_fits<T>(S, B); }, [&] { return cluster_one_wave<T>(S, B); },
                                 [&] { return persistent_fits<T>(S, B, products); });
}

// Whether a call computing in float32 has the caller's bfloat16 tensors for its products, as a bfloat16 call on
// the graph path keeps them (half_forward, half_backward).
bool keeps_half_operands(const lltm_tensor* weights) { return weights->dtype == LLTM_BFLOAT16; }

// The products' bfloat16 operands as the caller gave them: x's rows (through a contiguous copy where they are
// not evenly spaced) and W_x.
struct HalfOperands {
  InputRows<__nv_bfloat16> X;
  Matrix<const __nv_bfloat16> Wx;
};

HalfOperands half_operands_of(const lltm_tensor& inputs, const lltm_tensor& weights, int64_t S, cudaStream_t stream) {
  const Matrix<const __nv_bfloat16> W = matrix<const __nv_bfloat16>(weights);
  return {input_rows<__nv_bfloat16>(inputs, LLTM_BFLOAT16, stream),
          {W.data + S * W.cs, W.rows, W.cols - S, W.rs, W.cs}};
}

// d_inputs [T * B, F] written by `product(dX)`: in place where its rows are evenly spaced, else through a
// contiguous copy.
template <typename T, typename Product>
void into_d_inputs(const lltm_tensor& d_inputs, int32_t dtype, cudaStream_t stream, Product&& product) {
  const int64_t rows = d_inputs.sizes[0] * d_inputs.sizes[1], F = d_inputs.sizes[2];
  Matrix<T> dX;
  Scratch staged(rows_of(d_inputs, dX) ? 0 : size_t(rows * F) * sizeof(T));
  if (staged.as<void>() != nullptr) dX = row_major(staged.as<T>(), rows, F);
  product(dX);
  if (staged.as<void>() != nullptr) strided_copy(d_inputs, contiguous_like(d_inputs, staged.as<void>()), dtype, stream);
}

// The graph path's products after a bfloat16 call's recurrence, on the caller's bfloat16 inputs and weights, into
// its bfloat16 d_inputs and d_weights (float32 sums, rounded once), the bias's from dGm into a float32 copy.
void finish_on_kept(const SequenceBackwardArgs& a, const Bfloat16Copy& dG_half, Matrix<const float> dGm,
                    const GemmEngine& engine, cudaStream_t stream) {
  using bf16 = __nv_bfloat16;
  const int64_t rows = dGm.rows, G = dGm.cols, S = a.n.state, F = a.n.features;
  const HalfOperands x = half_operands_of(*a.inputs, *a.weights, S, stream);
  if (a.d_inputs != nullptr)
    into_d_inputs<bf16>(*a.d_inputs, LLTM_BFLOAT16, stream,
                        [&](Matrix<bf16> dX) { gemm<bf16>(engine, dG_half.m, x.Wx, dX, bf16(0.0f)); });
  const Matrix<bf16> dW = matrix<bf16>(*a.d_weights);
  const bf16 beta(a.accumulate ? 1.0f : 0.0f);
  const float* H = static_cast<const float*>(a.reserve) + kPlaneH * rows * S;
  const Bfloat16Copy H_half = bfloat16_copy(stream, row_major<const float>(H, rows, S));
  gemm<bf16>(engine, dG_half.m.transposed(), H_half.m, {dW.data, G, S, dW.rs, dW.cs}, beta);
  gemm<bf16>(engine, dG_half.m.transposed(), x.X.m, {dW.data + S * dW.cs, G, F, dW.rs, dW.cs}, beta);
  column_sums<float>(stream, dGm, static_cast<float*>(a.d_bias->data), a.d_bias->strides[0], a.accumulate);
}

// `chosen`: the kernels where the caller has chosen them already (half_forward, half_backward), else chosen here.
template <typename T>
void forward(const SequenceForwardArgs& a, int32_t dtype, int32_t float32_precision, int device, DeviceState& dev,
             const SequenceKernels* chosen = nullptr) {
  check_sizes(a.n, "lltm_sequence_forward");
  const int64_t steps = a.n.steps, B = a.n.batch, F = a.n.features, S = a.n.state, G = 3 * S;
  const SampleLengths lengths = checked_lengths(a.lengths, steps, "lltm_sequence_forward", dev.stream);
  const RecurrentProducts products = recurrent_products<T>(float32_precision);
  const SequenceKernels kernels = chosen != nullptr ? *chosen : choose<T>(S, B, products);
  const GemmEngine engine = gemm_engine(dev, kernels.own_gemm, float32_precision);
  const bool half_operands = keeps_half_operands(a.weights);
  // G_in [T * B, 3S] = X W_x^T for every step at once; the bias joins in the recurrence.
  auto project = [&](T* gin) {
    const Matrix<T> out = row_major(gin, steps * B, G);
    if constexpr (std::is_same_v<T, float>) {
      if (half_operands) {
        const HalfOperands x = half_operands_of(*a.inputs, *a.weights, S, dev.stream);
        return gemm_widened(engine, x.X.m, x.Wx.transposed(), out, 0.0f);
      }
    }
    const InputRows<T> X = input_rows<T>(*a.inputs, dtype, dev.stream);
    const Matrix<const T> W = matrix<const T>(*a.weights);
    const Matrix<const T> Wx{W.data + S * W.cs, G, F, W.rs, W.cs};
    rows_product<T>(engine, dev.stream, big_half_products<T>(kernels, engine), X.m, false, Wx, true, out, T(0));
  };
  SequenceForwardTensors<T> p{nullptr,
                              accessor1<const T>(*a.bias),
                              half_operands ? Accessor<const T, 2>{} : accessor<const T, 2>(*a.weights),
                              accessor<const T, 2>(*a.h0),
                              accessor<const T, 2>(*a.c0),
                              accessor<T, 3>(*a.outputs),
                              accessor<T, 2>(*a.last_h),
                              accessor<T, 2>(*a.last_cell),
                              static_cast<T*>(a.reserve),
                              nullptr,
                              nullptr,
                              int(steps),
                              int(B),
                              int(S),
                              lengths};
  if (kernels.recurrence == Recurrence::kGraph) {
    const HalfWeights half_weights = accessor<const __nv_bfloat16, 2>(*a.weights);
    return graph_forward<T>(p, engine, device, project, half_operands ? &half_weights : nullptr);
  }
  // The cluster kernels keep the cells and h between steps on chip.
  const bool on_chip = kernels.recurrence == Recurrence::kCluster;
  Scratch gin(size_t(steps * B * G) * sizeof(T)), cell(on_chip ? 0 : size_t(B * S) * sizeof(T));
  Scratch h_buffer(a.reserve == nullptr && !on_chip ? size_t(2 * B * S) * sizeof(T) : 0);
  project(gin.as<T>());
  p.gin = gin.as<T>();
  p.h_buffer = h_buffer.as<T>();
  p.cell = cell.as<T>();
  // Rounded float32 products take the tensor-core clusters where they fit,
  // unless LLTM_CUDA_KERNELS asks for the grid-wide persistent kernels.
  auto on_tensor_core_clusters = [&] {
    if constexpr (std::is_same_v<T, float>) return !forced("persistent") && cluster_mma_forward(p, products, dev.stream);
    return false;
  };
  if (on_chip)
    cluster_forward(p, dev.stream);
  else if (!on_tensor_core_clusters())
    persistent_forward(p, products, dev.stream);
}

// `chosen`: as forward's.
template <typename T>
void backward(const SequenceBackwardArgs& a, int32_t dtype, int32_t float32_precision, int device, DeviceState& dev,
              const SequenceKernels* chosen = nullptr) {
  check_sizes(a.n, "lltm_sequence_backward");
  const int64_t steps = a.n.steps, B = a.n.batch, F = a.n.features, S = a.n.state, G = 3 * S;
  const SampleLengths lengths = checked_lengths(a.lengths, steps, "lltm_sequence_backward", dev.stream);
  const RecurrentProducts products = recurrent_products<T>(float32_precision);
  const SequenceKernels kernels = chosen != nullptr ? *chosen : choose<T>(S, B, products);
  const GemmEngine engine = gemm_engine(dev, kernels.own_gemm, float32_precision);
  const T* reserve = static_cast<const T*>(a.reserve);
  const bool half_operands = keeps_half_operands(a.weights);
  // The weight gradients go to the side stream outside the graph path (whose
  // finish runs inside its graph); a call that starts beside a layer's worth
  // of side work, or on a lane beside others, takes the clusters' half of the
  // device, leaving the rest to them (where the side work is small the grid
  // kernel's speed pays more).
  const bool side_stream = !forced("one-stream");
  const bool overlap_weight_gradients = side_stream && kernels.recurrence != Recurrence::kGraph;
  const bool beside_side_work =
      side_stream && (side_work_flops(device) >= kHalfDeviceSideFlops || on_shared_lane(device));
  SequenceBackwardTensors<T> p{optional_accessor<const T, 3>(a.grad_outputs),
                               optional_accessor<const T, 2>(a.grad_last_h),
                               optional_accessor<const T, 2>(a.grad_last_cell),
                               half_operands ? Accessor<const T, 2>{} : accessor<const T, 2>(*a.weights),
                               a.grad_outputs != nullptr,
                               a.grad_last_h != nullptr,
                               a.grad_last_cell != nullptr,
                               reserve,
                               nullptr,
                               nullptr,
                               nullptr,
                               accessor<T, 2>(*a.d_h0),
                               accessor<T, 2>(*a.d_c0),
                               int(steps),
                               int(B),
                               int(S),
                               lengths};

  // Once every step's gate gradients are known (row-major, or gate-major
  // where the recurrence wrote them so), the rest is products over all T * B
  // rows; bias_rows: each row's gate gradients summed over the steps, where
  // the recurrence wrote them ([B, 3S]; else nullptr).
  auto finish = [&](const Matrix<const T> dGm, const T* bias_rows, const __nv_bfloat16* dG_given) {
    // With half products, dG in bfloat16 once for the three products that read it (the graph path's own where
    // its steps' products wrote one).
    const bool half = big_half_products<T>(kernels, engine);
    std::optional<Bfloat16Copy> dG_half;
    if constexpr (std::is_same_v<T, float>) {
      if (half)
        dG_half = dG_given != nullptr ? Bfloat16Copy{nullptr, row_major(dG_given, dGm.rows, dGm.cols)}
                                      : bfloat16_copy(dev.stream, dGm);
      if (half_operands) return finish_on_kept(a, *dG_half, dGm, engine, dev.stream);
    }
    const Bfloat16Copy* dG_copy = dG_half ? &*dG_half : nullptr;
    const Matrix<const T> W = matrix<const T>(*a.weights);
    const Matrix<const T> Wx{W.data + S * W.cs, G, F, W.rs, W.cs};
    const InputRows<T> X = input_rows<T>(*a.inputs, dtype, dev.stream);
    // d_inputs [T * B, F] = dG W_x when asked for.
    if (a.d_inputs != nullptr) {
      into_d_inputs<T>(*a.d_inputs, dtype, dev.stream, [&](Matrix<T> dX) {
        // A gate-major dG is not contiguous along this product's depth (the gates): W_x then goes column-major.
        std::unique_ptr<Scratch> wx_copy;
        const Matrix<const T> Wx_operand = dGm.rs == 1 ? column_major_copy(dev.stream, Wx, wx_copy) : Wx;
        rows_product<T>(engine, dev.stream, half, dGm, false, Wx_operand, false, dX, T(0), dG_copy);
      });
    }
    // d_weights = dG^T [h_{t-1}, x_t] summed over steps (H: the saved h_{t-1}
    // of every step): at the cluster recurrence's sizes with the bias in one
    // launch, else a product for the h columns, one for the x columns and the
    // bias's column sums. Nothing later in the backward reads them: outside
    // the graph path they run on the side stream (runtime/side_work.h),
    // beside the calls that follow, the layer below's recurrence first.
    const Matrix<T> dW = matrix<T>(*a.d_weights);
    const Matrix<const T> H = row_major<const T>(reserve + kPlaneH * steps * B * S, steps * B, S);
    T* d_bias = static_cast<T*>(a.d_bias->data);
    std::optional<SideWork> side;
    // What the side work touches: the caller's tensors, and the scratch it reads (dG, a copy of the inputs, the
    // bias rows).
    if (overlap_weight_gradients) {
      std::vector<Span> touched{tensor_span(*a.d_weights), tensor_span(*a.d_bias), tensor_span(*a.inputs),
                                matrix_span(H), matrix_span(X.m), matrix_span(dGm)};
      if (bias_rows != nullptr) touched.push_back(matrix_span(row_major<const T>(bias_rows, B, G)));
      side.emplace(device, std::move(touched), 2.0 * double(steps * B) * double(G) * double(S + F));
    }
    const cudaStream_t stream = side ? side->stream() : dev.stream;
    if (kernels.recurrence == Recurrence::kCluster && weight_gradients_fit(steps * B, G, S + F))
      return weight_gradients<T>({dGm, H, X.m, dW, d_bias, a.d_bias->strides[0], a.accumulate}, stream);
    const GemmEngine products_engine = side ? side_gemm_engine(dev, engine) : engine;
    const T beta = a.accumulate ? T(1) : T(0);
    const Matrix<T> dWh{dW.data, G, S, dW.rs, dW.cs}, dWx{dW.data + S * dW.cs, G, F, dW.rs, dW.cs};
    rows_product<T>(products_engine, stream, half, dGm, true, H, false, dWh, beta, dG_copy);
    rows_product<T>(products_engine, stream, half, dGm, true, X.m, false, dWx, beta, dG_copy);
    column_sums<T>(stream, bias_rows != nullptr ? row_major<const T>(bias_rows, B, G) : dGm, d_bias,
                   a.d_bias->strides[0], a.accumulate);
  };
  if (kernels.recurrence == Recurrence::kGraph) {
    const HalfWeights half_weights = accessor<const __nv_bfloat16, 2>(*a.weights);
    return graph_backward<T>(
        p, engine, device,
        [&](const T* dG, const __nv_bfloat16* dG_half) { finish(row_major<const T>(dG, steps * B, G), nullptr, dG_half); },
        half_operands ? &half_weights : nullptr);
  }
  // The cluster kernels keep dh and dc between steps on chip.
  const bool on_chip = kernels.recurrence == Recurrence::kCluster;
  const size_t carried = on_chip ? 0 : size_t(B * S) * sizeof(T);
  Scratch dG(size_t(steps * B * G) * sizeof(T)), dh(carried), dc(carried);
  p.dG = dG.as<T>();
  p.dh = dh.as<T>();
  p.dc = dc.as<T>();
  const Matrix<const T> by_row = row_major<const T>(dG.as<T>(), steps * B, G);
  if (on_chip) {
    cluster_backward(p, dev.stream);
    return finish(by_row, nullptr, nullptr);
  }
  // Gate-major where cuBLAS's TF32 products take it: d_weights' products reduce over the T * B rows, along
  // which a row-major dG is not contiguous, and cuBLAS runs such a product on Ampere-era kernels.
  p.dG_by_gate = uses_blas(engine) && tf32_products<T>(engine);
  const Matrix<const T> by_gate{dG.as<T>(), steps * B, G, 1, steps * B};
  // bfloat16 products take the tensor-core clusters where they fit, as the forward does; TF32 ones stay on the
  // grid kernel unless cluster-mma is forced or side work runs beside: with half of W_h's TF32 fragments in
  // shared memory the cluster backward is slower than backward_mma alone (BENCHMARKS.md), but leaves the
  // device's other half to the side work, where the grid kernel would wait for it.
  // The cluster backward also sums each row's gate gradients over the steps, so that the bias's gradient reads
  // B rows rather than dG's T * B.
  std::optional<Scratch> bias_rows;
  auto on_tensor_core_clusters = [&] {
    if constexpr (std::is_same_v<T, float>) {
      if (forced("persistent") ||
          !(products == RecurrentProducts::kBfloat16 || forced("cluster-mma") || beside_side_work))
        return false;
      SequenceBackwardTensors<T> with_rows = p;
      with_rows.bias_rows = bias_rows.emplace(size_t(B * G) * sizeof(T)).template as<T>();
      return cluster_mma_backward(with_rows, products, dev.stream);
    }
    return false;
  };
  if (on_tensor_core_clusters())
    return finish(p.dG_by_gate ? by_gate : by_row, bias_rows->template as<const T>(), nullptr);
  finish(persistent_backward(p, products, dev.stream) ? by_gate : by_row, nullptr, nullptr);
}

template <typename T>
int64_t clustered_copies(int32_t float32_precision, int64_t S, int64_t B) {
  const RecurrentProducts products = recurrent_products<T>(float32_precision);
  if (choose<T>(S, B, products).recurrence == Recurrence::kCluster) return cluster_copies<T>(S, B);
  if constexpr (std::is_same_v<T, float>) {
    if (products != RecurrentProducts::kExact && !forced("persistent")) return cluster_mma_copies(S, B, products);
  }
  return 0;
}

// A bfloat16 or float16 call computes in float32 at its type's products' precision (half_call_precision), its
// tensors copied to float32 and back (math/float32_copies.h), but for a bfloat16 call on the graph path the
// tensors only its products touch: they read its inputs and weights as they are, as they would read bfloat16
// copies, and write d_inputs and d_weights rounded once from their float32 sums, as the copies would be.
bool keeps_half(int32_t dtype, const SequenceKernels& kernels) {
  return dtype == LLTM_BFLOAT16 && kernels.recurrence == Recurrence::kGraph;
}

// The kernels of a half call's float32 pass, chosen once for keeps_half and the pass.
SequenceKernels half_kernels(int32_t float32_precision, const SequenceSizes& n) {
  return choose<float>(n.state, n.batch, recurrent_products<float>(float32_precision));
}

void half_forward(const SequenceForwardArgs& a, int32_t dtype, int32_t precision, int device, DeviceState& dev) {
  const int32_t float32_precision = half_call_precision(dtype, precision);
  const SequenceKernels kernels = half_kernels(float32_precision, a.n);
  const bool keep = keeps_half(dtype, kernels);
  Float32Copies f(dev.stream);
  SequenceForwardArgs s = a;
  s.inputs = keep ? a.inputs : f.of(a.inputs, true, false);
  s.weights = keep ? a.weights : f.of(a.weights, true, false);
  s.bias = f.of(a.bias, true, false);
  s.h0 = f.of(a.h0, true, false);
  s.c0 = f.of(a.c0, true, false);
  s.outputs = f.of(a.outputs, false, true);
  s.last_h = f.of(a.last_h, false, true);
  s.last_cell = f.of(a.last_cell, false, true);
  forward<float>(s, LLTM_FLOAT32, float32_precision, device, dev, &kernels);
  f.write_back();
}

void half_backward(const SequenceBackwardArgs& a, int32_t dtype, int32_t precision, int device, DeviceState& dev) {
  const int32_t float32_precision = half_call_precision(dtype, precision);
  const SequenceKernels kernels = half_kernels(float32_precision, a.n);
  const bool keep = keeps_half(dtype, kernels);
  Float32Copies f(dev.stream);
  SequenceBackwardArgs s = a;
  s.grad_outputs = f.of(a.grad_outputs, true, false);
  s.grad_last_h = f.of(a.grad_last_h, true, false);
  s.grad_last_cell = f.of(a.grad_last_cell, true, false);
  s.inputs = keep ? a.inputs : f.of(a.inputs, true, false);
  s.weights = keep ? a.weights : f.of(a.weights, true, false);
  s.h0 = f.of(a.h0, true, false);
  s.d_inputs = keep ? a.d_inputs : f.of(a.d_inputs, false, true);
  s.d_weights = keep ? a.d_weights : f.of(a.d_weights, a.accumulate, true);
  s.d_bias = f.of(a.d_bias, a.accumulate, true);
  s.d_h0 = f.of(a.d_h0, false, true);
  s.d_c0 = f.of(a.d_c0, false, true);
  backward<float>(s, LLTM_FLOAT32, float32_precision, device, dev, &kernels);
  // The weight gradients may still be running on the side stream (runtime/side_work.h).
  const lltm_tensor* side_written[] = {s.d_weights, s.d_bias};
  settle_side_work(device, side_written, 2);
  f.write_back();
}

}  // namespace

int64_t clustered_recurrence_copies(int32_t dtype, int32_t float32_precision, int64_t S, int64_t B) {
  return dispatch_compute(dtype, "lltm_stacked_forward", [&](auto types) {
    return clustered_copies<typename decltype(types)::compute>(float32_precision, S, B);
  });
}

void sequence_forward(const SequenceForwardArgs& args, int32_t dtype, int32_t float32_precision, int device) {
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  if (dtype == LLTM_BFLOAT16 || dtype == LLTM_FLOAT16) return half_forward(args, dtype, float32_precision, device, dev);
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_sequence_forward", [&] {
    forward<scalar_t>(args, dtype, float32_precision, device, dev);
  });
}

void sequence_backward(const SequenceBackwardArgs& args, int32_t dtype, int32_t float32_precision, int device) {
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  if (dtype == LLTM_BFLOAT16 || dtype == LLTM_FLOAT16) return half_backward(args, dtype, float32_precision, device, dev);
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_sequence_backward", [&] {
    backward<scalar_t>(args, dtype, float32_precision, device, dev);
  });
}

}  // namespace lltm::cuda
