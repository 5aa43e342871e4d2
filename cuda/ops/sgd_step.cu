// torch.optim.SGD's step on the device, in place, on the device's stream.
#include "dispatch.h"
#include "op_args.h"
#include "ops/sgd_step.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void sgd_kernel(T* p, const T* g, T* buf, T lr, T momentum, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    if (buf == nullptr) {
      p[i] -= lr * g[i];
    } else {
      buf[i] = momentum * buf[i] + g[i];
      p[i] -= lr * buf[i];
    }
  }
}

}  // namespace

void op_sgd_step(const OpCall& call, int device) {
  const SgdArgs a = sgd_args(call);
  DeviceGuard guard(device);
  const int64_t n = numel(*a.param);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_sgd_step", [&] {
    using T = scalar_t;
    T* buf = a.momentum == 0.0 ? nullptr : static_cast<T*>(a.momentum_buffer->data);
    launch("sgd_kernel", sgd_kernel<T>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0, state(device).stream,
           static_cast<T*>(a.param->data), static_cast<const T*>(a.grad->data), buf, T(a.lr), T(a.momentum), n);
  });
}

LLTM_CUDA_OP(SGD_STEP, op_sgd_step);

}  // namespace lltm::cuda
