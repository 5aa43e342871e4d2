// add on the device: out = a + alpha * b, one thread per element (out may be a or b).
#include "dispatch.h"
#include "lltm_args.h"
#include "math/shape4.cuh"
#include "op_slots.h"
#include "ops/add.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void add_kernel(T* out, Shape4 os, const T* a, Shape4 as, const T* b, Shape4 bs, T alpha, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[offset_of(i, os, os)] = a[offset_of(i, os, as)] + alpha * b[offset_of(i, os, bs)];
}

}  // namespace

void op_add(const OpCall& call, int device) {
  namespace s = slots::ADD;
  const lltm_tensor &out = *call.tensors[s::out], &a = *call.tensors[s::a], &b = *call.tensors[s::b];
  const int64_t n = numel(out);
  DeviceGuard guard(device);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_add", [&] {
    using T = scalar_t;
    launch("add_kernel", add_kernel<T>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0, state(device).stream,
           static_cast<T*>(out.data), shape4(out), static_cast<const T*>(a.data), shape4(a),
           static_cast<const T*>(b.data), shape4(b), T(call.scalars[scalars::ADD::alpha]), n);
  });
}

LLTM_CUDA_OP(ADD, op_add);

}  // namespace lltm::cuda
