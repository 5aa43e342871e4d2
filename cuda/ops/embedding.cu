// embedding on the device: the ids checked first (ops/refusals.h's refusal,
// nothing written), then one thread per element of y copying weight[id, d];
// the gather skips an id out of range, so no path reads outside weight.
#include "dispatch.h"
#include "math/index_check.cuh"
#include "op_slots.h"
#include "ops/embedding.cuh"
#include "ops/refusals.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void gather_kernel(const T* w, int64_t w0, int64_t w1, const int32_t* ids, int64_t is, T* y, int64_t y0,
                              int64_t y1, int64_t N, int64_t V, int64_t D) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < N * D; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t n = e / D, d = e % D;
    const int64_t id = ids[n * is];
    if (id >= 0 && id < V) y[n * y0 + d * y1] = w[id * w0 + d * w1];
  }
}

}  // namespace

void op_embedding(const OpCall& call, int device) {
  namespace s = slots::EMBEDDING;
  const lltm_tensor &w = *call.tensors[s::weight], &ids = *call.tensors[s::ids], &y = *call.tensors[s::y];
  const int64_t N = call.size('N'), V = call.size('V'), D = call.size('D');
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  check_indices_on_device("lltm_embedding", "ids", ids, N, {V, false, 0}, stream);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_embedding", [&] {
    launch("gather_kernel", gather_kernel<scalar_t>, dim3(grid_blocks(N * D)), dim3(kBlockThreads), 0, stream,
           static_cast<const scalar_t*>(w.data), w.strides[0], w.strides[1], static_cast<const int32_t*>(ids.data),
           ids.strides[0], static_cast<scalar_t*>(y.data), y.strides[0], y.strides[1], N, V, D);
  });
}

LLTM_CUDA_OP(EMBEDDING, op_embedding);

}  // namespace lltm::cuda
