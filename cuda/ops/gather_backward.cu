// gather's backward on the device: the indices checked first, then one
// thread per column (o, i) of d_x, which zeroes it (unless accumulating) and
// adds grad_out's elements of that column into it, q in order: no atomics,
// and the same sums as the CPU's, run after run.
#include "dispatch.h"
#include "math/index_check.cuh"
#include "math/shape4.cuh"
#include "op_slots.h"
#include "ops/gather_backward.cuh"
#include "ops/refusals.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void scatter_add_kernel(const T* g, Strides3 gs, const int32_t* index, T* dx, Strides3 ds, int64_t O,
                                   int64_t P, int64_t Q, int64_t I, bool accumulate) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < O * I; c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t o = c / I, i = c % I;
    T* column = dx + o * ds.s0 + i * ds.s2;
    if (!accumulate)
      for (int64_t p = 0; p < P; ++p) column[p * ds.s1] = T(0);
    for (int64_t q = 0; q < Q; ++q) {
      const int64_t p = index[(o * Q + q) * I + i];  // contiguous [O, Q, I]
      if (p >= 0 && p < P) column[p * ds.s1] += g[o * gs.s0 + q * gs.s1 + i * gs.s2];
    }
  }
}

}  // namespace

void op_gather_backward(const OpCall& call, int device) {
  namespace s = slots::GATHER_BACKWARD;
  const lltm_tensor &g = *call.tensors[s::grad_out], &index = *call.tensors[s::index], &dx = *call.tensors[s::d_x];
  const int64_t O = call.size('O'), P = call.size('P'), Q = call.size('Q'), I = call.size('I');
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  check_indices_on_device("lltm_gather_backward", "index", ops::flat_indices(index, O * Q * I), O * Q * I,
                          {P, false, 0}, stream);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_gather_backward", [&] {
    using T = scalar_t;
    launch("scatter_add_kernel", scatter_add_kernel<T>, dim3(grid_blocks(O * I)), dim3(kBlockThreads), 0, stream,
           static_cast<const T*>(g.data), strides3(g), static_cast<const int32_t*>(index.data),
           static_cast<T*>(dx.data), strides3(dx), O, P, Q, I, (call.flags & LLTM_ACCUMULATE_PARAM_GRADS) != 0);
  });
}

LLTM_CUDA_OP(GATHER_BACKWARD, op_gather_backward);

}  // namespace lltm::cuda
