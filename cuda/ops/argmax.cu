// argmax on the device: one warp per row (math/rows.cuh), the first largest
// element, a NaN counting as largest: each lane finds its elements' first
// largest, then the lanes' candidates meet, the larger (or the earlier on a
// tie) winning.
#include "dispatch.h"
#include "math/rows.cuh"
#include "op_slots.h"
#include "ops/argmax.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

// Whether candidate (a, i) comes before (b, j): a NaN first, then the larger, then the earlier.
template <typename T>
__device__ __forceinline__ bool before(T a, int64_t i, T b, int64_t j) {
  if (isnan(a) || isnan(b)) return isnan(a) && (!isnan(b) || i < j);
  return a > b || (a == b && i < j);
}

template <typename T>
__global__ void argmax_kernel(const T* x, int64_t x0, int64_t x1, int32_t* out, int64_t os, int64_t N, int64_t V) {
  for (int64_t n = first_row(); n < N; n += row_step()) {
    const T* row = x + n * x0;
    // A lane without elements holds (-inf, V), which every element comes before.
    T best = -INFINITY;
    int64_t at = V;
    for (int64_t v = row_lane(); v < V; v += kRowLanes) {
      const T value = row[v * x1];
      if (before(value, v, best, at)) best = value, at = v;
    }
    for (int o = kRowLanes / 2; o > 0; o >>= 1) {
      const T other = __shfl_xor_sync(0xffffffffu, best, o);
      const int64_t other_at = __shfl_xor_sync(0xffffffffu, at, o);
      if (before(other, other_at, best, at)) best = other, at = other_at;
    }
    if (row_lane() == 0) out[n * os] = int32_t(at);
  }
}

}  // namespace

void op_argmax(const OpCall& call, int device) {
  namespace s = slots::ARGMAX;
  const lltm_tensor &x = *call.tensors[s::x], &out = *call.tensors[s::indices];
  const int64_t N = call.size('N'), V = call.size('V');
  DeviceGuard guard(device);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_argmax", [&] {
    using T = scalar_t;
    launch_rows("argmax_kernel", argmax_kernel<T>, N, state(device).stream, static_cast<const T*>(x.data),
                x.strides[0], x.strides[1], static_cast<int32_t*>(out.data), out.strides[0], N, V);
  });
}

LLTM_CUDA_OP(ARGMAX, op_argmax);

}  // namespace lltm::cuda
