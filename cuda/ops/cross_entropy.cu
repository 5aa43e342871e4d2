// cross_entropy on the device: the targets checked first (nothing written on
// a bad one), then one warp per row (math/rows.cuh) computing
// log(sum exp(x - max)) - (x[target] - max); for the mean and the sum the
// rows' losses go through a scratch buffer that one block adds up in double,
// counting the rows not ignored.
#include "dispatch.h"
#include "math/index_check.cuh"
#include "math/reduce.cuh"
#include "math/rows.cuh"
#include "op_slots.h"
#include "ops/cross_entropy.cuh"
#include "ops/refusals.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void row_losses_kernel(const T* x, int64_t x0, int64_t x1, const int32_t* t, int64_t ts, int64_t N,
                                  int64_t V, int64_t ignore, T* losses, int64_t ls, double* row_loss) {
  for (int64_t n = first_row(); n < N; n += row_step()) {
    const int64_t target = t[n * ts];
    T loss = 0;
    if (target != ignore && (target < 0 || target >= V)) {
      loss = T(NAN);  // only in a captured call, which cannot stop to refuse it: no read outside the row
    } else if (target != ignore) {
      const T* row = x + n * x0;
      const RowExp<T> e = row_exp(row, x1, V);
      loss = log(e.sum) - (row[target * x1] - e.max);
    }
    if (row_lane() != 0) continue;
    if (losses != nullptr)
      losses[n * ls] = loss;
    else
      row_loss[n] = double(loss);
  }
}

template <typename T>
__global__ void total_kernel(const double* row_loss, const int32_t* t, int64_t ts, int64_t N, int64_t ignore,
                             bool mean, T* total) {
  double sum = strided_sum(threadIdx.x, N, blockDim.x, [&](int64_t n) { return row_loss[n]; });
  double count = strided_sum(threadIdx.x, N, blockDim.x, [&](int64_t n) { return t[n * ts] != ignore ? 1.0 : 0.0; });
  sum = block_sum(sum);
  __syncthreads();
  count = block_sum(count);
  if (threadIdx.x == 0) *total = T(mean ? sum / count : sum);
}

}  // namespace

void op_cross_entropy(const OpCall& call, int device) {
  namespace s = slots::CROSS_ENTROPY;
  namespace k = scalars::CROSS_ENTROPY;
  const lltm_tensor &x = *call.tensors[s::logits], &t = *call.tensors[s::targets];
  const lltm_tensor *losses = call.tensors[s::losses], *total = call.tensors[s::total];
  const int64_t N = call.size('N'), V = call.size('V');
  const int64_t reduction = int64_t(call.scalars[k::reduction]), ignore = int64_t(call.scalars[k::ignore_index]);
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  check_indices_on_device("lltm_cross_entropy", "targets", t, N, {V, true, ignore}, stream);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_cross_entropy", [&] {
    using T = scalar_t;
    const int32_t* td = static_cast<const int32_t*>(t.data);
    if (reduction == 0) {
      launch_rows("row_losses_kernel", row_losses_kernel<T>, N, stream, static_cast<const T*>(x.data), x.strides[0],
                  x.strides[1], td, t.strides[0], N, V, ignore, static_cast<T*>(losses->data), losses->strides[0],
                  static_cast<double*>(nullptr));
      return;
    }
    Scratch row_loss(size_t(N) * sizeof(double));
    launch_rows("row_losses_kernel", row_losses_kernel<T>, N, stream, static_cast<const T*>(x.data), x.strides[0],
                x.strides[1], td, t.strides[0], N, V, ignore, static_cast<T*>(nullptr), int64_t(0),
                row_loss.as<double>());
    launch("total_kernel", total_kernel<T>, dim3(1), dim3(kBlockThreads), 0, stream, row_loss.as<const double>(), td,
           t.strides[0], N, ignore, reduction == 1, static_cast<T*>(total->data));
  });
}

LLTM_CUDA_OP(CROSS_ENTROPY, op_cross_entropy);

}  // namespace lltm::cuda
