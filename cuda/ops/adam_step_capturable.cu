// adam_step_capturable on the device: every thread reads lr and the step
// count from hyper where it lives, so that a captured step replayed later
// uses the lr and step of that replay; the bias corrections in double.
#include "dispatch.h"
#include "lltm_args.h"
#include "op_slots.h"
#include "ops/adam_step_capturable.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void adam_capturable_kernel(T* p, const T* g, T* m, T* v, const T* hyper, double beta1, double beta2,
                                       double eps, double weight_decay, int64_t n) {
  const double lr = double(hyper[0]), step = double(hyper[1]) + 1.0;
  const T decay = T(-lr * weight_decay);
  const T b1 = T(beta1), b2 = T(beta2), e = T(eps);
  const T step_size = T(lr / (1.0 - pow(beta1, step)));
  const T correction2_sqrt = T(sqrt(1.0 - pow(beta2, step)));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    T w = p[i];
    w += decay * w;
    const T mi = b1 * m[i] + (T(1) - b1) * g[i];
    const T vi = b2 * v[i] + (T(1) - b2) * g[i] * g[i];
    m[i] = mi;
    v[i] = vi;
    p[i] = w - step_size * mi / (sqrt(vi) / correction2_sqrt + e);
  }
}

}  // namespace

void op_adam_step_capturable(const OpCall& call, int device) {
  namespace s = slots::ADAM_STEP_CAPTURABLE;
  namespace k = scalars::ADAM_STEP_CAPTURABLE;
  const int64_t n = numel(*call.tensors[s::param]);
  DeviceGuard guard(device);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_adam_step_capturable", [&] {
    using T = scalar_t;
    launch("adam_capturable_kernel", adam_capturable_kernel<T>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0,
           state(device).stream, static_cast<T*>(call.tensors[s::param]->data),
           static_cast<const T*>(call.tensors[s::grad]->data), static_cast<T*>(call.tensors[s::exp_avg]->data),
           static_cast<T*>(call.tensors[s::exp_avg_sq]->data), static_cast<const T*>(call.tensors[s::hyper]->data),
           call.scalars[k::beta1], call.scalars[k::beta2], call.scalars[k::eps], call.scalars[k::weight_decay], n);
  });
}

LLTM_CUDA_OP(ADAM_STEP_CAPTURABLE, op_adam_step_capturable);

}  // namespace lltm::cuda
