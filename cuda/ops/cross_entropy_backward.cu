// cross_entropy's backward on the device: the targets checked first, then
// one warp per row (math/rows.cuh) writing (softmax - onehot(target)) times
// the row's gradient. For the mean every block first counts the rows not
// ignored itself (a separate single-block launch would wait on the check
// and sit on the step's critical path).
#include <algorithm>

#include "dispatch.h"
#include "math/index_check.cuh"
#include "math/reduce.cuh"
#include "math/rows.cuh"
#include "op_slots.h"
#include "ops/cross_entropy_backward.cuh"
#include "ops/refusals.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

// The targets not ignored, all N of them, in every thread of the block (all
// of which call it): each block of the mean counts them for itself, 25 KB of
// int32 at a char-LM's 6400 rows, from L2 once the first blocks read them.
__device__ __forceinline__ double count_targets(const int32_t* t, int64_t ts, int64_t N, int64_t ignore) {
  __shared__ double count;
  const double c =
      block_sum(strided_sum(threadIdx.x, N, blockDim.x, [&](int64_t n) { return t[n * ts] != ignore ? 1.0 : 0.0; }));
  if (threadIdx.x == 0) count = c;
  __syncthreads();
  return count;
}

template <typename T>
__global__ void grad_kernel(const T* x, int64_t x0, int64_t x1, const int32_t* t, int64_t ts, int64_t N, int64_t V,
                            int64_t ignore, int64_t reduction, const T* g_losses, int64_t gls, const T* g_total, T* d,
                            int64_t d0, int64_t d1) {
  // Every counted row's gradient under "mean" and "sum"; per row under "none".
  const T g_row = reduction == 1   ? T(double(*g_total) / count_targets(t, ts, N, ignore))
                  : reduction == 2 ? *g_total
                                   : T(0);
  for (int64_t n = first_row(); n < N; n += row_step()) {
    const int64_t target = t[n * ts];
    T* out = d + n * d0;
    if (target == ignore) {
      for (int64_t v = row_lane(); v < V; v += kRowLanes) out[v * d1] = T(0);
      continue;
    }
    const T g = reduction == 0 ? g_losses[n * gls] : g_row;
    const T* row = x + n * x0;
    const RowExp<T> e = row_exp(row, x1, V);
    for (int64_t v = row_lane(); v < V; v += kRowLanes)
      out[v * d1] = (exp(row[v * x1] - e.max) / e.sum - T(v == target)) * g;
  }
}

}  // namespace

void op_cross_entropy_backward(const OpCall& call, int device) {
  namespace s = slots::CROSS_ENTROPY_BACKWARD;
  namespace k = scalars::CROSS_ENTROPY_BACKWARD;
  const lltm_tensor &x = *call.tensors[s::logits], &t = *call.tensors[s::targets], &d = *call.tensors[s::d_logits];
  const lltm_tensor *g_losses = call.tensors[s::grad_losses], *g_total = call.tensors[s::grad_total];
  const int64_t N = call.size('N'), V = call.size('V');
  const int64_t reduction = int64_t(call.scalars[k::reduction]), ignore = int64_t(call.scalars[k::ignore_index]);
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  check_indices_on_device("lltm_cross_entropy_backward", "targets", t, N, {V, true, ignore}, stream);
  // Under the mean every block counts all N targets before its rows: two blocks an SM at most, each taking
  // more rows, rather than a wave after wave of blocks that each count them again.
  unsigned blocks = row_blocks(N);
  if (reduction == 1) blocks = std::min(blocks, 2 * unsigned(device_facts(device).multiprocessors));
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_cross_entropy_backward", [&] {
    using T = scalar_t;
    launch("grad_kernel", grad_kernel<T>, dim3(blocks), dim3(kBlockThreads), 0, stream, static_cast<const T*>(x.data),
           x.strides[0], x.strides[1], static_cast<const int32_t*>(t.data), t.strides[0], N, V, ignore, reduction,
           g_losses != nullptr ? static_cast<const T*>(g_losses->data) : nullptr,
           g_losses != nullptr ? g_losses->strides[0] : int64_t(0),
           g_total != nullptr ? static_cast<const T*>(g_total->data) : nullptr, static_cast<T*>(d.data), d.strides[0],
           d.strides[1]);
  });
}

LLTM_CUDA_OP(CROSS_ENTROPY_BACKWARD, op_cross_entropy_backward);

}  // namespace lltm::cuda
