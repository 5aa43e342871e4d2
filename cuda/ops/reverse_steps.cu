// reverse_steps on the device: the lengths checked first (nothing written on
// a bad one), then one thread per element of y, reading x at its sample's
// reversed step.
#include "dispatch.h"
#include "op_slots.h"
#include "ops/reverse_steps.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"
#include "sequence/lengths.cuh"

namespace lltm::cuda {

namespace {

// Element i of y [T, B, X] (row-major order): step i / (B X), sample i / X % B, feature i % X.
template <typename T>
__global__ void reverse_steps_kernel(const T* x, int64_t xt, int64_t xb, int64_t xe, T* y, int64_t yt, int64_t yb,
                                     int64_t ye, int64_t steps, int64_t B, int64_t X, SampleLengths lengths) {
  const int64_t n = steps * B * X;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / (B * X), b = i / X % B, e = i % X;
    const int64_t length = lengths.of(int(b), int(steps));
    const int64_t from = t < length ? length - 1 - t : t;
    y[t * yt + b * yb + e * ye] = x[from * xt + b * xb + e * xe];
  }
}

}  // namespace

void op_reverse_steps(const OpCall& call, int device) {
  namespace s = slots::REVERSE_STEPS;
  const lltm_tensor &x = *call.tensors[s::x], &y = *call.tensors[s::y];
  const int64_t T = call.size('T'), B = call.size('B'), X = call.size('X');
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  const SampleLengths lengths = checked_lengths(call.tensors[s::lengths], T, "lltm_reverse_steps", stream);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_reverse_steps", [&] {
    using F = scalar_t;
    launch("reverse_steps_kernel", reverse_steps_kernel<F>, dim3(grid_blocks(T * B * X)), dim3(kBlockThreads), 0,
           stream, static_cast<const F*>(x.data), x.strides[0], x.strides[1], x.strides[2], static_cast<F*>(y.data),
           y.strides[0], y.strides[1], y.strides[2], T, B, X, lengths);
  });
}

LLTM_CUDA_OP(REVERSE_STEPS, op_reverse_steps);

}  // namespace lltm::cuda
