#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "math/gemm.h"
#include "runtime/capture.h"
#include "runtime/launch.h"
#include "sequence/graph/graph.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void __launch_bounds__(kBlockThreads) forward_step_pointwise(SequenceForwardTensors<T> p, int t) {
  const int64_t n = int64_t(p.B) * p.S;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int b = int(e / p.S), s = int(e % p.S);
    const T* g = p.gin + (int64_t(t) * p.B + b) * 3 * p.S;
    const T g0 = g[s] + p.bias[s], g1 = g[p.S + s] + p.bias[p.S + s], g2 = g[2 * p.S + s] + p.bias[2 * p.S + s];
    const T i = sigmoid(g0), o = sigmoid(g1), z = elu(g2);
    if (p.reserve != nullptr) {
      p.plane(kPlaneGate0, t)[e] = g0;
      p.plane(kPlaneGate1, t)[e] = g1;
      p.plane(kPlaneGate2, t)[e] = g2;
    }
    if (t == 0) save_h0(p, b, s);
    finish_cell(p, t, b, s, i, o, z, old_cell_of(p, t, b, s));
  }
}

template <typename T>
__global__ void __launch_bounds__(kBlockThreads) backward_step_pointwise(SequenceBackwardTensors<T> p, int t) {
  const int64_t n = int64_t(p.B) * p.S;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
  {
    const int b = int(e / p.S), s = int(e % p.S);
    backward_cell(p, t, b, s, load_saved(p, t, b, s));
  }
}

// A graph's shape: calls of equal shape capture graphs of equal topology,
// so the last call's executable graph is updated in place (new pointers)
// rather than instantiated again.
using Shape = std::array<int64_t, 6>;

struct CachedGraph {
  cudaGraphExec_t exec = nullptr;
  Shape shape{};
};

// What capturing needs, per device: a stream of its own (nothing else may
// launch into a capture), a cuBLAS handle bound to it with a fixed workspace
// (cuBLAS must not allocate while captured), and each pass's last executable
// graph. The mutex serialises the graph path's calls on a device.
struct GraphState {
  std::mutex mutex;
  cudaStream_t capture = nullptr;
#if LLTM_HAVE_CUBLAS
  cublasHandle_t blas = nullptr;
  void* workspace = nullptr;
#endif
  CachedGraph forward, backward;
};

#if LLTM_HAVE_CUBLAS
constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;
#endif

GraphState& graph_state(int device) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<GraphState>> all(device_count());
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<GraphState>& g = all.at(device);
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

// Captures `record` (launches on the capture stream) into a graph, updates
// the cached executable graph from it (or makes one), and launches that on `stream`.
template <typename Record>
void capture_and_launch(GraphState& g, CachedGraph& cached, const Shape& shape, cudaStream_t stream,
                        Record&& record) {
  LLTM_CUDA_CHECK(cudaStreamBeginCapture(g.capture, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    record();
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
  // An update can still fail where cuBLAS picks other kernels (other alignments, say); then instantiate anew.
  if (cached.exec != nullptr && cached.shape == shape) {
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(cached.exec, graph, &info) == cudaSuccess) {
      LLTM_CUDA_CHECK(cudaGraphLaunch(cached.exec, stream));
      return;
    }
    cudaGetLastError();  // clear the failed update's error
  }
  if (cached.exec != nullptr) {
    LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));  // its last launch is done with it
    LLTM_CUDA_CHECK(cudaGraphExecDestroy(cached.exec));
    cached.exec = nullptr;
  }
  LLTM_CUDA_CHECK(cudaGraphInstantiate(&cached.exec, graph, 0));
  cached.shape = shape;
  LLTM_CUDA_CHECK(cudaGraphLaunch(cached.exec, stream));
}

GemmEngine engine_for(GraphState& g, bool own_gemm) {
#if LLTM_HAVE_CUBLAS
  return {g.capture, own_gemm ? nullptr : g.blas};
#else
  (void)own_gemm;
  return {g.capture};
#endif
}

template <typename T>
Matrix<const T> view(const Accessor<const T, 2>& a, int64_t rows, int64_t cols) {
  return {a.data, rows, cols, a.strides[0], a.strides[1]};
}

// The T steps' launches on `engine`'s stream, forward and backward.
template <typename T>
void forward_steps(const SequenceForwardTensors<T>& p, const GemmEngine& engine) {
  const int64_t B = p.B, S = p.S, G = 3 * S;
  const Matrix<const T> Wh_t = view(p.weights, G, S).transposed();
  for (int t = 0; t < p.steps; ++t) {
    const Matrix<const T> h_prev = t == 0 ? view(p.h0, B, S) : row_major<const T>(p.h_of(t - 1), B, S);
    gemm<T>(engine, h_prev, Wh_t, row_major(const_cast<T*>(p.gin) + t * B * G, B, G), T(1));
    launch("forward_step_pointwise", forward_step_pointwise<T>, dim3(grid_blocks(B * S)), dim3(kBlockThreads), 0,
           engine.stream, p, t);
  }
}

template <typename T>
void backward_steps(const SequenceBackwardTensors<T>& p, const GemmEngine& engine) {
  const int64_t B = p.B, S = p.S, G = 3 * S;
  const Matrix<const T> Wh = view(p.weights, G, S);
  const Matrix<T> d_h0{p.d_h0.data, B, S, p.d_h0.strides[0], p.d_h0.strides[1]};
  for (int t = p.steps - 1; t >= 0; --t) {
    launch("backward_step_pointwise", backward_step_pointwise<T>, dim3(grid_blocks(B * S)), dim3(kBlockThreads), 0,
           engine.stream, p, t);
    gemm<T>(engine, row_major<const T>(p.dG + t * B * G, B, G), Wh, t > 0 ? row_major(p.dh, B, S) : d_h0, T(0));
  }
}

}  // namespace

// Inside a step being captured (runtime/capture.h) the steps are launched
// into that capture directly: a graph of their own would nest captures.
template <typename T>
void graph_forward(const SequenceForwardTensors<T>& p, bool own_gemm, int device, cudaStream_t stream) {
  if (recording(stream)) return forward_steps(p, gemm_engine(state(device), own_gemm));
  GraphState& g = graph_state(device);
  std::lock_guard<std::mutex> lock(g.mutex);
  const Shape shape{p.steps, p.B, p.S, sizeof(T), own_gemm, p.reserve != nullptr};
  capture_and_launch(g, g.forward, shape, stream, [&] { forward_steps(p, engine_for(g, own_gemm)); });
}

template <typename T>
void graph_backward(const SequenceBackwardTensors<T>& p, bool own_gemm, int device, cudaStream_t stream) {
  if (recording(stream)) return backward_steps(p, gemm_engine(state(device), own_gemm));
  GraphState& g = graph_state(device);
  std::lock_guard<std::mutex> lock(g.mutex);
  const Shape shape{p.steps, p.B, p.S, sizeof(T), own_gemm, 0};
  capture_and_launch(g, g.backward, shape, stream, [&] { backward_steps(p, engine_for(g, own_gemm)); });
}

template void graph_forward<float>(const SequenceForwardTensors<float>&, bool, int, cudaStream_t);
template void graph_forward<double>(const SequenceForwardTensors<double>&, bool, int, cudaStream_t);
template void graph_backward<float>(const SequenceBackwardTensors<float>&, bool, int, cudaStream_t);
template void graph_backward<double>(const SequenceBackwardTensors<double>&, bool, int, cudaStream_t);

}  // namespace lltm::cuda
