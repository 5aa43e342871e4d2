// softmax's backward on the device: one warp per row (math/rows.cuh), d_x = y * (grad_y - sum(grad_y * y)).
#include "dispatch.h"
#include "math/rows.cuh"
#include "op_slots.h"
#include "ops/softmax_backward.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void softmax_backward_kernel(const T* y, int64_t y0, int64_t y1, const T* g, int64_t g0, int64_t g1, T* d,
                                        int64_t d0, int64_t d1, int64_t N, int64_t V) {
  for (int64_t n = first_row(); n < N; n += row_step()) {
    T dot = 0;
    for (int64_t v = row_lane(); v < V; v += kRowLanes) dot += y[n * y0 + v * y1] * g[n * g0 + v * g1];
    dot = warp_sum(dot);
    for (int64_t v = row_lane(); v < V; v += kRowLanes)
      d[n * d0 + v * d1] = y[n * y0 + v * y1] * (g[n * g0 + v * g1] - dot);
  }
}

}  // namespace

void op_softmax_backward(const OpCall& call, int device) {
  namespace s = slots::SOFTMAX_BACKWARD;
  const lltm_tensor &y = *call.tensors[s::y], &g = *call.tensors[s::grad_y], &d = *call.tensors[s::d_x];
  const int64_t N = call.size('N'), V = call.size('V');
  DeviceGuard guard(device);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_softmax_backward", [&] {
    using T = scalar_t;
    launch_rows("softmax_backward_kernel", softmax_backward_kernel<T>, N, state(device).stream,
                static_cast<const T*>(y.data), y.strides[0], y.strides[1], static_cast<const T*>(g.data), g.strides[0],
                g.strides[1], static_cast<T*>(d.data), d.strides[0], d.strides[1], N, V);
  });
}

LLTM_CUDA_OP(SOFTMAX_BACKWARD, op_softmax_backward);

}  // namespace lltm::cuda
