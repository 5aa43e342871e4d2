// argmax on the device: one thread per row, the first largest element, a NaN counting as largest.
#include "dispatch.h"
#include "math/rows.cuh"
#include "op_slots.h"
#include "ops/argmax.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void argmax_kernel(const T* x, int64_t x0, int64_t x1, int32_t* out, int64_t os, int64_t N, int64_t V) {
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < N; n += int64_t(gridDim.x) * blockDim.x) {
    const T* row = x + n * x0;
    int64_t best = 0;
    for (int64_t v = 1; v < V && !isnan(row[best * x1]); ++v) {
      const T value = row[v * x1];
      if (isnan(value) || value > row[best * x1]) best = v;
    }
    out[n * os] = int32_t(best);
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
