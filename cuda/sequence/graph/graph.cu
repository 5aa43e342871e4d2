#include <algorithm>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "math/dtype.cuh"
#include "math/gemm.h"
#include "math/pack.cuh"
#include "math/shape4.cuh"
#include "runtime/capture.h"
#include "runtime/launch.h"
#include "sequence/graph/graph.h"

namespace lltm::cuda {

namespace {

// W_h, the first S columns of the weights [3S, S + F] (any strides, of the call's type or, for half products,
// the caller's bfloat16 where the call is one), into a contiguous [3S, S] of type W: T itself, or bfloat16 for
// half products.
// `packed`: W_h's rows dense and aligned to whole packs (packed_rows), copied a pack a thread.
template <typename Src, typename W>
__device__ __forceinline__ void copy_recurrent_weights(const Accessor<const Src, 2>& weights, int S, W* out,
                                                       bool packed) {
  if (packed) {
    const int64_t row_packs = S / kPack, packs = int64_t(3) * S * row_packs;
    for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < packs; e += int64_t(gridDim.x) * blockDim.x) {
      const Src* row = weights.data + e / row_packs * weights.strides[0];
      const Pack<Src> in = reinterpret_cast<const Pack<Src>*>(row)[e % row_packs];
      Pack<W> converted;
#pragma unroll
      for (int j = 0; j < kPack; ++j) converted.v[j] = convert<W>(in.v[j]);
      reinterpret_cast<Pack<W>*>(out)[e] = converted;
    }
    return;
  }
  const int64_t n = int64_t(3) * S * S;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const RowCol at = row_col(e, n, S);
    out[e] = RoundTo<W>::from(weights[at.row][at.col]);
  }
}

// Whether W_h's rows (the first S columns of each) are dense, each starting on a whole pack, and whole packs long.
template <typename Src>
bool packed_rows(const Accessor<const Src, 2>& weights, int S) {
  return weights.strides[1] == 1 && weights.strides[0] % kPack == 0 && S % kPack == 0 &&
         pack_aligned<Src>(weights.data);
}

// Before each replay of a forward graph: the call's tensors into the graph's
// block, W_h and h0 (as the h of step -1, which step 0's product reads) into
// its buffers (h0 also into h_first_half, in bfloat16, for half products).
template <typename T, typename W, typename Src>
__global__ void __launch_bounds__(kBlockThreads)
    forward_prologue(SequenceForwardTensors<T> p, SequenceForwardTensors<T>* params, Accessor<const Src, 2> weights,
                     bool packed, W* wh, T* h_first, __nv_bfloat16* h_first_half) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *params = p;
  copy_recurrent_weights(weights, p.S, wh, packed);
  const int64_t n = int64_t(p.B) * p.S;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const RowCol at = row_col(e, n, p.S);
    const T h = p.h0[at.row][at.col];
    h_first[e] = h;
    if (h_first_half != nullptr) h_first_half[e] = RoundTo<__nv_bfloat16>::from(h);
  }
}

// The call's tensors, which the prologue wrote into the graph's block before the graph ran, into this block's
// shared memory `raw` (a word a thread): one trip to memory for the block instead of each thread's own reads of
// every field it uses. Safe before wait_for_prior_grid: no kernel of the graph writes them.
template <typename P>
__device__ __forceinline__ const P& staged_params(const P* params, unsigned char* raw) {
  static_assert(sizeof(P) % sizeof(uint32_t) == 0, "whole words");
  for (int i = threadIdx.x; i < int(sizeof(P) / sizeof(uint32_t)); i += blockDim.x)
    reinterpret_cast<uint32_t*>(raw)[i] = reinterpret_cast<const uint32_t*>(params)[i];
  __syncthreads();
  return *reinterpret_cast<const P*>(raw);
}

// Step t after its product: the gates, the cell update, and h_t into the
// graph's h slot t % 2 (p.h_buffer), which step t + 1's product reads (for
// half products, the slot of h_half in bfloat16).
template <typename T>
__global__ void __launch_bounds__(kBlockThreads)
    forward_step_pointwise(const SequenceForwardTensors<T>* params, int t, __nv_bfloat16* h_half) {
  __shared__ alignas(16) unsigned char raw[sizeof(SequenceForwardTensors<T>)];
  const SequenceForwardTensors<T>& p = staged_params(params, raw);
  const int64_t n = int64_t(p.B) * p.S, first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  // What the step's product does not write (the bias, and the cell and h that step t - 1's kernel wrote, which
  // finished before the product began) is read before the wait: with a programmatic launch, behind the product.
  struct Known {
    T b0, b1, b2, old_cell, old_h;
    bool live;
  };
  auto known = [&](int b, int s) {
    const bool live = t < p.lengths.of(b, p.steps);
    return Known{p.bias[s], p.bias[p.S + s], p.bias[2 * p.S + s], old_cell_of(p, t, b, s),
                 live ? T(0) : old_h_of(p, t, b, s), live};
  };
  Known ahead{};
  if (first < n) {
    const RowCol at = row_col(first, n, p.S);
    ahead = known(int(at.row), at.col);
  }
  wait_for_prior_grid();
  for (int64_t e = first; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const RowCol at = row_col(e, n, p.S);
    const int b = int(at.row), s = at.col;
    const Known k = e == first ? ahead : known(b, s);
    const T* g = p.gin + (int64_t(t) * p.B + b) * 3 * p.S;
    const T g0 = g[s] + k.b0, g1 = g[p.S + s] + k.b1, g2 = g[2 * p.S + s] + k.b2;
    const T i = sigmoid(g0), o = sigmoid(g1), z = elu(g2);
    if (p.reserve != nullptr) {
      p.plane(kPlaneGate0, t)[e] = g0;
      p.plane(kPlaneGate1, t)[e] = g1;
      p.plane(kPlaneGate2, t)[e] = g2;
    }
    if (t == 0) save_h0(p, b, s);
    // Past the sample's length its state is carried (finish_cell's rule, with h_t kept for the product).
    const CellUpdate<T> u = k.live ? cell_update(i, o, z, k.old_cell) : CellUpdate<T>{k.old_cell, k.old_h};
    store_cell(p, t, b, s, u, k.live);
    // The next step's product reads h_t from h_half with half products, else from the float slot, which
    // store_cell wrote only where no reserve takes h_t.
    if (h_half != nullptr && t + 1 < p.steps)
      h_half[(t & 1) * n + e] = RoundTo<__nv_bfloat16>::from(u.h);
    else if (p.reserve != nullptr && t + 1 < p.steps)
      p.h_buffer[(t & 1) * n + e] = u.h;
  }
}

// Before each replay of a backward graph: the call's tensors into the graph's block, W_h into its buffer.
template <typename T, typename W, typename Src>
__global__ void __launch_bounds__(kBlockThreads)
    backward_prologue(SequenceBackwardTensors<T> p, SequenceBackwardTensors<T>* params, Accessor<const Src, 2> weights,
                      bool packed, W* wh) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *params = p;
  copy_recurrent_weights(weights, p.S, wh, packed);
}

// Step t's gate gradients into dG (and, for half products, into dG_half,
// step t's [B, 3S] in bfloat16, which the step's product then reads).
template <typename T>
__global__ void __launch_bounds__(kBlockThreads)
    backward_step_pointwise(const SequenceBackwardTensors<T>* params, int t, __nv_bfloat16* dG_half) {
  __shared__ alignas(16) unsigned char raw[sizeof(SequenceBackwardTensors<T>)];
  const SequenceBackwardTensors<T>& p = staged_params(params, raw);
  const int64_t n = int64_t(p.B) * p.S, first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  // What no kernel of the pass writes (the saved gates and cell, the output's gradient) is read before the wait:
  // with a programmatic launch, behind the step before's product.
  SavedCell<T> ahead{};
  if (first < n) {
    const RowCol at = row_col(first, n, p.S);
    ahead = load_saved(p, t, int(at.row), at.col);
  }
  wait_for_prior_grid();
  for (int64_t e = first; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const RowCol at = row_col(e, n, p.S);
    const int b = int(at.row), s = at.col;
    const CellGradients<T> d = backward_cell(p, t, b, s, e == first ? ahead : load_saved(p, t, b, s));
    if (dG_half == nullptr) continue;
    __nv_bfloat16* dg = dG_half + int64_t(b) * 3 * p.S + s;
    dg[0] = RoundTo<__nv_bfloat16>::from(d.d0);
    dg[p.S] = RoundTo<__nv_bfloat16>::from(d.d1);
    dg[2 * p.S] = RoundTo<__nv_bfloat16>::from(d.d2);
  }
}

// After step 0's product: dh, the gradient of h0, into d_h0 (any strides).
template <typename T>
__global__ void __launch_bounds__(kBlockThreads) store_d_h0(const SequenceBackwardTensors<T>* params) {
  const SequenceBackwardTensors<T> p = *params;
  const int64_t n = int64_t(p.B) * p.S;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const RowCol at = row_col(e, n, p.S);
    p.d_h0[at.row][at.col] = p.dh[e];
  }
}

enum class Pass { kForward, kBackward };

// Everything a captured graph depends on besides the buffers it owns.
struct GraphKey {
  Pass pass;
  int64_t steps, B, S;
  size_t element_bytes;
  bool own_gemm, reserve;
  int32_t float32_precision;

  bool operator==(const GraphKey& o) const {
    return pass == o.pass && steps == o.steps && B == o.B && S == o.S && element_bytes == o.element_bytes &&
           own_gemm == o.own_gemm && reserve == o.reserve && float32_precision == o.float32_precision;
  }
};

// A captured graph and the buffers its nodes read and write: the call's
// tensors (`params`), W_h, the gate sums or gradients of every step, the
// carried state (h slots and cell, or dh and dc), and for half products the
// bfloat16 operand of each step's product (the h slots, or the step's dG).
struct CachedGraph {
  GraphKey key;
  cudaGraphExec_t exec = nullptr;
  std::unique_ptr<Scratch> params, weights, gates, state, half;
  uint64_t last_use = 0;
};

// What capturing needs, per device: a stream of its own (nothing else may
// launch into a capture), a cuBLAS handle bound to it with a fixed workspace
// (cuBLAS must not allocate while captured), and the cached graphs. The
// mutex serialises the graph path's passes on a device.
struct GraphState {
  std::mutex mutex;
  cudaStream_t capture = nullptr;
#if LLTM_HAVE_CUBLAS
  cublasHandle_t blas = nullptr;
  void* workspace = nullptr;
#endif
  std::vector<std::unique_ptr<CachedGraph>> graphs;
  uint64_t uses = 0;
};

#if LLTM_HAVE_CUBLAS
constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;
#endif

// Never destroyed: the graphs' buffers go back to the device pool, which
// must not be called into after the runtime has shut down at exit.
GraphState& graph_state(int device) {
  static std::mutex mutex;
  static auto* all = new std::vector<std::unique_ptr<GraphState>>(device_count());
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<GraphState>& g = all->at(device);
  if (!g) {
    auto fresh = std::make_unique<GraphState>();
    LLTM_CUDA_CHECK(cudaStreamCreateWithFlags(&fresh->capture, cudaStreamNonBlocking));
#if LLTM_HAVE_CUBLAS
    if (blas_available()) {
      LLTM_CUDA_CHECK(cublasCreate(&fresh->blas));
      LLTM_CUDA_CHECK(cublasSetStream(fresh->blas, fresh->capture));
      LLTM_CUDA_CHECK(cudaMalloc(&fresh->workspace, kBlasWorkspaceBytes));
      LLTM_CUDA_CHECK(cublasSetWorkspace(fresh->blas, fresh->workspace, kBlasWorkspaceBytes));
    }
#endif
    g = std::move(fresh);
  }
  return *g;
}

// The capture stream's engine for products computed as the call's `engine` computes them.
GemmEngine engine_for(GraphState& g, const GemmEngine& engine) {
#if LLTM_HAVE_CUBLAS
  return {g.capture, engine.float32_precision, uses_blas(engine) ? g.blas : nullptr};
#else
  return {g.capture, engine.float32_precision};
#endif
}

template <typename T>
GraphKey key_of(Pass pass, int64_t steps, int64_t B, int64_t S, bool reserve, const GemmEngine& engine) {
  // Float64 products are exact at every precision: one graph serves them all.
  const int32_t precision = sizeof(T) == sizeof(float) ? engine.float32_precision : LLTM_MATMUL_PRECISION_HIGHEST;
  return {pass, steps, B, S, sizeof(T), !uses_blas(engine), reserve, precision};
}

struct BufferBytes {
  size_t params, weights, gates, state, half;
};

void allocate(CachedGraph& c, const BufferBytes& bytes) {
  c.params = std::make_unique<Scratch>(bytes.params);
  c.weights = std::make_unique<Scratch>(bytes.weights);
  c.gates = std::make_unique<Scratch>(bytes.gates);
  c.state = std::make_unique<Scratch>(bytes.state);
  c.half = std::make_unique<Scratch>(bytes.half);
}

// The cached graph of `key`, or a new one: its buffers allocated, then
// `record(graph)` (launches on the capture stream) captured and instantiated.
// A full cache first gives up its least recently used graph, once `stream`
// is done with it.
template <typename Record>
CachedGraph& cached_graph(GraphState& g, const GraphKey& key, const BufferBytes& bytes, cudaStream_t stream,
                          Record&& record) {
  for (const std::unique_ptr<CachedGraph>& c : g.graphs)
    if (c->key == key) {
      c->last_use = ++g.uses;
      return *c;
    }
  if (g.graphs.size() >= size_t(kMaxCachedGraphs)) {
    auto oldest = std::min_element(g.graphs.begin(), g.graphs.end(),
                                   [](const auto& a, const auto& b) { return a->last_use < b->last_use; });
    LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));
    LLTM_CUDA_CHECK(cudaGraphExecDestroy((*oldest)->exec));
    g.graphs.erase(oldest);
  }
  auto fresh = std::make_unique<CachedGraph>();
  fresh->key = key;
  allocate(*fresh, bytes);
  LLTM_CUDA_CHECK(cudaStreamBeginCapture(g.capture, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    record(*fresh);
  } catch (...) {
    cudaStreamEndCapture(g.capture, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    throw;
  }
  LLTM_CUDA_CHECK(cudaStreamEndCapture(g.capture, &graph));
  struct GraphOwner {
    cudaGraph_t graph;
    ~GraphOwner() { cudaGraphDestroy(graph); }
  } owner{graph};
  LLTM_CUDA_CHECK(cudaGraphInstantiate(&fresh->exec, graph, 0));
  fresh->last_use = ++g.uses;
  g.graphs.push_back(std::move(fresh));
  return *g.graphs.back();
}

// The forward's T steps on `e`'s stream, reading the call from c.params and
// carrying h in c.state's slots: what a graph records, or what runs inside
// a capture already in progress.
template <typename T>
void forward_steps(const CachedGraph& c, const GemmEngine& e, int64_t steps, int64_t B, int64_t S) {
  const int64_t G = 3 * S, BS = B * S;
  const auto* params = c.params->as<SequenceForwardTensors<T>>();
  __nv_bfloat16* h_half = half_products<T>(e) ? c.half->as<__nv_bfloat16>() : nullptr;
  for (int t = 0; t < steps; ++t) {
    const int64_t slot = ((t + 1) & 1) * BS;
    const Matrix<T> gates = row_major(c.gates->as<T>() + t * B * G, B, G);
    if (h_half != nullptr) {
      if constexpr (std::is_same_v<T, float>) {
        const Matrix<const __nv_bfloat16> Wh = row_major<const __nv_bfloat16>(c.weights->as<__nv_bfloat16>(), G, S);
        gemm_widened(e, row_major<const __nv_bfloat16>(h_half + slot, B, S), Wh.transposed(), gates, 1.0f);
      }
    } else {
      const Matrix<const T> Wh = row_major<const T>(c.weights->as<T>(), G, S);
      gemm<T>(e, row_major<const T>(c.state->as<T>() + slot, B, S), Wh.transposed(), gates, T(1));
    }
    // Launched while the step's product finishes (it follows the product, never the prologue).
    launch_after("forward_step_pointwise", forward_step_pointwise<T>, dim3(grid_blocks(BS)), dim3(kBlockThreads), 0,
                 e.stream, params, t, h_half);
  }
}

// The call into c's buffers (its tensors, W_h, h0 and the input projection), on `stream`.
template <typename T>
void forward_prologue_of(const SequenceForwardTensors<T>& p, const CachedGraph& c, cudaStream_t stream, bool half,
                         const std::function<void(T* gin)>& project, const HalfWeights* half_weights) {
  const int64_t BS = int64_t(p.B) * p.S, G = 3 * int64_t(p.S);
  SequenceForwardTensors<T> q = p;
  q.gin = c.gates->as<T>();
  q.h_buffer = c.state->as<T>();
  q.cell = c.state->as<T>() + 2 * BS;
  project(c.gates->as<T>());
  auto* params = c.params->as<SequenceForwardTensors<T>>();
  // `kernel` copies W_h from `weights` into `wh`: the prologues differ only in those types.
  auto prologue = [&](auto kernel, const auto& weights, auto* wh) {
    launch("forward_prologue", kernel, dim3(grid_blocks(G * p.S)), dim3(kBlockThreads), 0, stream, q, params, weights,
           packed_rows(weights, p.S), wh, c.state->as<T>() + BS, half ? c.half->as<__nv_bfloat16>() + BS : nullptr);
  };
  if (half_weights != nullptr)
    prologue(forward_prologue<T, __nv_bfloat16, __nv_bfloat16>, *half_weights, c.weights->as<__nv_bfloat16>());
  else if (half)
    prologue(forward_prologue<T, __nv_bfloat16, T>, p.weights, c.weights->as<__nv_bfloat16>());
  else
    prologue(forward_prologue<T, T, T>, p.weights, c.weights->as<T>());
}

template <typename T>
void backward_steps(const CachedGraph& c, const GemmEngine& e, int64_t steps, int64_t B, int64_t S) {
  const int64_t G = 3 * S, BS = B * S;
  const auto* params = c.params->as<SequenceBackwardTensors<T>>();
  __nv_bfloat16* dG_halves = half_products<T>(e) ? c.half->as<__nv_bfloat16>() : nullptr;
  const Matrix<T> dh = row_major(c.state->as<T>(), B, S);
  for (int64_t t = steps - 1; t >= 0; --t) {
    __nv_bfloat16* dG_half = dG_halves != nullptr ? dG_halves + t * B * G : nullptr;
    // Launched while the step before's product finishes; the first step's follows the prologue, which writes
    // the block its threads read before they wait, so it waits for it whole.
    const dim3 grid(grid_blocks(BS)), block(kBlockThreads);
    if (t + 1 == steps)
      launch("backward_step_pointwise", backward_step_pointwise<T>, grid, block, 0, e.stream, params, int(t), dG_half);
    else
      launch_after("backward_step_pointwise", backward_step_pointwise<T>, grid, block, 0, e.stream, params, int(t),
                   dG_half);
    if (dG_half != nullptr) {
      if constexpr (std::is_same_v<T, float>) {
        const Matrix<const __nv_bfloat16> Wh = row_major<const __nv_bfloat16>(c.weights->as<__nv_bfloat16>(), G, S);
        gemm_widened(e, row_major<const __nv_bfloat16>(dG_half, B, G), Wh, dh, 0.0f);
      }
    } else {
      const Matrix<const T> Wh = row_major<const T>(c.weights->as<T>(), G, S);
      gemm<T>(e, row_major<const T>(c.gates->as<T>() + t * B * G, B, G), Wh, dh, T(0));
    }
  }
  launch("store_d_h0", store_d_h0<T>, dim3(grid_blocks(BS)), dim3(kBlockThreads), 0, e.stream, params);
}

template <typename T>
void backward_prologue_of(const SequenceBackwardTensors<T>& p, const CachedGraph& c, cudaStream_t stream, bool half,
                          const HalfWeights* half_weights) {
  const int64_t BS = int64_t(p.B) * p.S, G = 3 * int64_t(p.S);
  SequenceBackwardTensors<T> q = p;
  q.dG = c.gates->as<T>();
  q.dh = c.state->as<T>();
  q.dc = c.state->as<T>() + BS;
  auto* params = c.params->as<SequenceBackwardTensors<T>>();
  // As the forward's: the prologues differ only in W_h's source and copy types.
  auto prologue = [&](auto kernel, const auto& weights, auto* wh) {
    launch("backward_prologue", kernel, dim3(grid_blocks(G * p.S)), dim3(kBlockThreads), 0, stream, q, params,
           weights, packed_rows(weights, p.S), wh);
  };
  if (half_weights != nullptr)
    prologue(backward_prologue<T, __nv_bfloat16, __nv_bfloat16>, *half_weights, c.weights->as<__nv_bfloat16>());
  else if (half)
    prologue(backward_prologue<T, __nv_bfloat16, T>, p.weights, c.weights->as<__nv_bfloat16>());
  else
    prologue(backward_prologue<T, T, T>, p.weights, c.weights->as<T>());
}

// The caller's bfloat16 W_h serves only half products, whose copy of it is bfloat16 too.
void check_half_weights(bool half, const HalfWeights* half_weights) {
  if (half_weights != nullptr && !half)
    fail(LLTM_ERR_INTERNAL, "the graph recurrence takes bfloat16 weights only for bfloat16 products");
}

}  // namespace

// Inside a step being captured (runtime/capture.h) the steps go into that
// capture directly, on buffers of their own that the capture keeps: a graph
// of their own would nest captures.
template <typename T>
void graph_forward(const SequenceForwardTensors<T>& p, const GemmEngine& engine, int device,
                   const std::function<void(T* gin)>& project, const HalfWeights* half_weights) {
  const int64_t B = p.B, S = p.S, G = 3 * S, BS = B * S;
  const cudaStream_t stream = engine.stream;
  const bool half = half_products<T>(engine);
  check_half_weights(half, half_weights);
  // state: h slots 0 and 1, then the cell; half: the h slots in bfloat16.
  const BufferBytes bytes{sizeof(SequenceForwardTensors<T>), size_t(G * S) * (half ? sizeof(__nv_bfloat16) : sizeof(T)),
                          size_t(p.steps * B * G) * sizeof(T), size_t(3 * BS) * sizeof(T),
                          half ? size_t(2 * BS) * sizeof(__nv_bfloat16) : 0};
  if (recording(stream)) {
    CachedGraph direct;
    allocate(direct, bytes);
    forward_prologue_of(p, direct, stream, half, project, half_weights);
    return forward_steps<T>(direct, engine, p.steps, B, S);
  }
  GraphState& g = graph_state(device);
  std::lock_guard<std::mutex> lock(g.mutex);
  const GraphKey key = key_of<T>(Pass::kForward, p.steps, B, S, p.reserve != nullptr, engine);
  CachedGraph& c = cached_graph(g, key, bytes, stream,
                                [&](CachedGraph& c) { forward_steps<T>(c, engine_for(g, engine), p.steps, B, S); });
  forward_prologue_of(p, c, stream, half, project, half_weights);
  LLTM_CUDA_CHECK(cudaGraphLaunch(c.exec, stream));
}

template <typename T>
void graph_backward(const SequenceBackwardTensors<T>& p, const GemmEngine& engine, int device,
                    const GraphFinish<T>& finish, const HalfWeights* half_weights) {
  const int64_t B = p.B, S = p.S, G = 3 * S, BS = B * S;
  const cudaStream_t stream = engine.stream;
  const bool half = half_products<T>(engine);
  check_half_weights(half, half_weights);
  // state: dh, then dc; half: every step's dG in bfloat16.
  const BufferBytes bytes{sizeof(SequenceBackwardTensors<T>), size_t(G * S) * (half ? sizeof(__nv_bfloat16) : sizeof(T)),
                          size_t(p.steps * B * G) * sizeof(T), size_t(2 * BS) * sizeof(T),
                          half ? size_t(p.steps * B * G) * sizeof(__nv_bfloat16) : 0};
  if (recording(stream)) {
    CachedGraph direct;
    allocate(direct, bytes);
    backward_prologue_of(p, direct, stream, half, half_weights);
    backward_steps<T>(direct, engine, p.steps, B, S);
    return finish(direct.gates->as<T>(), half ? direct.half->as<__nv_bfloat16>() : nullptr);
  }
  GraphState& g = graph_state(device);
  std::lock_guard<std::mutex> lock(g.mutex);
  const GraphKey key = key_of<T>(Pass::kBackward, p.steps, B, S, false, engine);
  CachedGraph& c = cached_graph(g, key, bytes, stream,
                                [&](CachedGraph& c) { backward_steps<T>(c, engine_for(g, engine), p.steps, B, S); });
  backward_prologue_of(p, c, stream, half, half_weights);
  LLTM_CUDA_CHECK(cudaGraphLaunch(c.exec, stream));
  finish(c.gates->as<T>(), half ? c.half->as<__nv_bfloat16>() : nullptr);
}

template void graph_forward<float>(const SequenceForwardTensors<float>&, const GemmEngine&, int,
                                   const std::function<void(float*)>&, const HalfWeights*);
template void graph_forward<double>(const SequenceForwardTensors<double>&, const GemmEngine&, int,
                                    const std::function<void(double*)>&, const HalfWeights*);
template void graph_backward<float>(const SequenceBackwardTensors<float>&, const GemmEngine&, int,
                                    const GraphFinish<float>&, const HalfWeights*);
template void graph_backward<double>(const SequenceBackwardTensors<double>&, const GemmEngine&, int,
                                     const GraphFinish<double>&, const HalfWeights*);

}  // namespace lltm::cuda
