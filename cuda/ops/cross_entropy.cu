// cross_entropy on the device: the targets checked first (nothing written on
// a bad one), then one warp per row (math/rows.cuh) computing
// log(sum exp(x - max)) - (x[target] - max). For the mean and the sum the
// same launch reduces: each block adds its rows' losses and counts the rows
// not ignored, in double, into a partial of its own, and the last block to
// finish adds the partials in block order (a second, single-block launch
// would wait on the first and sit on the step's critical path).
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

// Where the blocks of a mean or a sum leave their partials for the last one.
struct Partials {
  double* sum;       // one per block: its rows' losses
  double* count;     // one per block: its rows not ignored
  unsigned* ticket;  // the blocks done, zero at the launch
};

// Adds the block's rows (each warp's sum and count, in every lane of the
// warp) into its partials; the block that finishes last adds every block's,
// in block order, into *total. The same order on every run, whichever block
// is last.
template <typename T>
__device__ __forceinline__ void add_partials(double sum, double count, Partials p, bool mean, T* total) {
  __shared__ double warp_sums[kRowsPerBlock], warp_counts[kRowsPerBlock];
  __shared__ bool last;
  if (row_lane() == 0) {
    warp_sums[threadIdx.x / kRowLanes] = sum;
    warp_counts[threadIdx.x / kRowLanes] = count;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double s = 0, c = 0;
    for (int w = 0; w < kRowsPerBlock; ++w) {
      s += warp_sums[w];
      c += warp_counts[w];
    }
    p.sum[blockIdx.x] = s;
    p.count[blockIdx.x] = c;
    // The partials are visible device-wide before the ticket counts them, so
    // the block that draws the last ticket reads every block's.
    __threadfence();
    last = atomicAdd(p.ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  // Loads from L2 (__ldcg): the partials were written by other SMs.
  double s = strided_sum(threadIdx.x, gridDim.x, blockDim.x, [&](int64_t b) { return __ldcg(p.sum + b); });
  double c = strided_sum(threadIdx.x, gridDim.x, blockDim.x, [&](int64_t b) { return __ldcg(p.count + b); });
  s = block_sum(s);
  __syncthreads();
  c = block_sum(c);
  if (threadIdx.x == 0) *total = T(mean ? s / c : s);
}

// Each row's loss into `losses` (reduction none), or their mean or sum into *total (`losses` null).
template <typename T>
__global__ void row_losses_kernel(const T* x, int64_t x0, int64_t x1, const int32_t* t, int64_t ts, int64_t N,
                                  int64_t V, int64_t ignore, T* losses, int64_t ls, Partials partials, bool mean,
                                  T* total) {
  double sum = 0, count = 0;  // this warp's rows, in row order
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
    if (losses != nullptr && row_lane() == 0) losses[n * ls] = loss;
    sum += double(loss);
    count += target != ignore ? 1.0 : 0.0;
  }
  if (losses == nullptr) add_partials(sum, count, partials, mean, total);
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
                  Partials{}, false, static_cast<T*>(nullptr));
      return;
    }
    const int64_t blocks = row_blocks(N);
    Scratch scratch(size_t(2 * blocks) * sizeof(double) + sizeof(unsigned));
    const Partials partials{scratch.as<double>(), scratch.as<double>() + blocks,
                            reinterpret_cast<unsigned*>(scratch.as<double>() + 2 * blocks)};
    // Zeroed on the stream, a node of its own in a captured graph: the
    // scratch block holds whatever its last user (another op, or this one on
    // the graph's previous replay) left there.
    LLTM_CUDA_CHECK(cudaMemsetAsync(partials.ticket, 0, sizeof(unsigned), stream));
    launch_rows("row_losses_kernel", row_losses_kernel<T>, N, stream, static_cast<const T*>(x.data), x.strides[0],
                x.strides[1], td, t.strides[0], N, V, ignore, static_cast<T*>(nullptr), int64_t(0), partials,
                reduction == 1, static_cast<T*>(total->data));
  });
}

LLTM_CUDA_OP(CROSS_ENTROPY, op_cross_entropy);

}  // namespace lltm::cuda
