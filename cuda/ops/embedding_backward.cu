// embedding's backward on the device: the ids checked first, d_weight zeroed
// unless accumulating, then one thread per element of grad_y adding it into
// d_weight[id, d] atomically (repeated ids add up; the order of the adds,
// and so the last bits of a float sum, may differ from run to run).
#include "dispatch.h"
#include "math/index_check.cuh"
#include "math/shape4.cuh"
#include "op_slots.h"
#include "ops/embedding_backward.cuh"
#include "ops/refusals.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void zero_kernel(T* t, Shape4 shape, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    t[offset_of(i, shape, shape)] = T(0);
}

template <typename T>
__global__ void scatter_add_kernel(const T* g, int64_t g0, int64_t g1, const int32_t* ids, int64_t is, T* dw,
                                   int64_t d0, int64_t d1, int64_t N, int64_t V, int64_t D) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < N * D; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t n = e / D, d = e % D;
    const int64_t id = ids[n * is];
    if (id >= 0 && id < V) atomicAdd(&dw[id * d0 + d * d1], g[n * g0 + d * g1]);
  }
}

}  // namespace

void op_embedding_backward(const OpCall& call, int device) {
  namespace s = slots::EMBEDDING_BACKWARD;
  const lltm_tensor &g = *call.tensors[s::grad_y], &ids = *call.tensors[s::ids], &dw = *call.tensors[s::d_weight];
  const int64_t N = call.size('N'), V = call.size('V'), D = call.size('D');
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  check_indices_on_device("lltm_embedding_backward", "ids", ids, N, {V, false, 0}, stream);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_embedding_backward", [&] {
    using T = scalar_t;
    if ((call.flags & LLTM_ACCUMULATE_PARAM_GRADS) == 0)
      launch("zero_kernel", zero_kernel<T>, dim3(grid_blocks(V * D)), dim3(kBlockThreads), 0, stream,
             static_cast<T*>(dw.data), shape4(dw), V * D);
    launch("scatter_add_kernel", scatter_add_kernel<T>, dim3(grid_blocks(N * D)), dim3(kBlockThreads), 0, stream,
           static_cast<const T*>(g.data), g.strides[0], g.strides[1], static_cast<const int32_t*>(ids.data),
           ids.strides[0], static_cast<T*>(dw.data), dw.strides[0], dw.strides[1], N, V, D);
  });
}

LLTM_CUDA_OP(EMBEDDING_BACKWARD, op_embedding_backward);

}  // namespace lltm::cuda
