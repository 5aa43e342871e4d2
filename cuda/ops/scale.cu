// scale on the device: out = alpha * x, one thread per element (out may be x).
#include "dispatch.h"
#include "lltm_args.h"
#include "math/shape4.cuh"
#include "op_slots.h"
#include "ops/scale.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void scale_kernel(T* out, Shape4 os, const T* x, Shape4 xs, T alpha, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[offset_of(i, os, os)] = alpha * x[offset_of(i, os, xs)];
}

}  // namespace

void op_scale(const OpCall& call, int device) {
  namespace s = slots::SCALE;
  const lltm_tensor &out = *call.tensors[s::out], &x = *call.tensors[s::x];
  const int64_t n = numel(out);
  DeviceGuard guard(device);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_scale", [&] {
    using T = scalar_t;
    launch("scale_kernel", scale_kernel<T>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0, state(device).stream,
           static_cast<T*>(out.data), shape4(out), static_cast<const T*>(x.data), shape4(x),
           T(call.scalars[scalars::SCALE::alpha]), n);
  });
}

LLTM_CUDA_OP(SCALE, op_scale);

}  // namespace lltm::cuda
