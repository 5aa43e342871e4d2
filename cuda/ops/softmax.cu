// softmax on the device: one warp per row (math/rows.cuh), exp(x - max) over their sum.
#include "dispatch.h"
#include "math/rows.cuh"
#include "op_slots.h"
#include "ops/softmax.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void softmax_kernel(const T* x, int64_t x0, int64_t x1, T* y, int64_t y0, int64_t y1, int64_t N,
                               int64_t V) {
  for (int64_t n = first_row(); n < N; n += row_step()) {
    const T* row = x + n * x0;
    const RowExp<T> e = row_exp(row, x1, V);
    for (int64_t v = row_lane(); v < V; v += kRowLanes) y[n * y0 + v * y1] = exp(row[v * x1] - e.max) / e.sum;
  }
}

}  // namespace

void op_softmax(const OpCall& call, int device) {
  namespace s = slots::SOFTMAX;
  const lltm_tensor &x = *call.tensors[s::x], &y = *call.tensors[s::y];
  const int64_t N = call.size('N'), V = call.size('V');
  DeviceGuard guard(device);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_softmax", [&] {
    using T = scalar_t;
    launch_rows("softmax_kernel", softmax_kernel<T>, N, state(device).stream, static_cast<const T*>(x.data),
                x.strides[0], x.strides[1], static_cast<T*>(y.data), y.strides[0], y.strides[1], N, V);
  });
}

LLTM_CUDA_OP(SOFTMAX, op_softmax);

}  // namespace lltm::cuda
