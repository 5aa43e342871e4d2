// torch.optim.Adam's step on the device, in place, on the device's stream.
#include <cmath>

#include "dispatch.h"
#include "op_args.h"
#include "ops/adam_step.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void adam_kernel(T* p, const T* g, T* m, T* v, T beta1, T beta2, T eps, T step_size, T correction2_sqrt,
                            int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    m[i] = beta1 * m[i] + (T(1) - beta1) * g[i];
    v[i] = beta2 * v[i] + (T(1) - beta2) * g[i] * g[i];
    p[i] -= step_size * m[i] / (sqrt(v[i]) / correction2_sqrt + eps);
  }
}

}  // namespace

void op_adam_step(const OpCall& call, int device) {
  const AdamArgs a = adam_args(call);
  DeviceGuard guard(device);
  const int64_t n = numel(*a.param);
  // The bias corrections in double on the host, as torch.optim.Adam computes them in Python.
  const double step_size = a.lr / (1.0 - std::pow(a.beta1, double(a.step)));
  const double correction2_sqrt = std::sqrt(1.0 - std::pow(a.beta2, double(a.step)));
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_adam_step", [&] {
    using T = scalar_t;
    launch("adam_kernel", adam_kernel<T>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0, state(device).stream,
           static_cast<T*>(a.param->data), static_cast<const T*>(a.grad->data), static_cast<T*>(a.exp_avg->data),
           static_cast<T*>(a.exp_avg_sq->data), T(a.beta1), T(a.beta2), T(a.eps), T(step_size), T(correction2_sqrt),
           n);
  });
}

LLTM_CUDA_OP(ADAM_STEP, op_adam_step);

}  // namespace lltm::cuda
