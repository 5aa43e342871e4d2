// unscale_check on the device: every thread scales its elements by inv_scale
// and, where one was an infinity or a NaN, sets found_inf to 1 where it lives
// (a plain store of the same value from any number of threads), so the flag
// stays on the device until the host needs the decision.
#include "dispatch.h"
#include "lltm_args.h"
#include "math/shape4.cuh"
#include "op_slots.h"
#include "ops/unscale_check.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void unscale_check_kernel(T* t, Shape4 ts, T* found_inf, double inv_scale, int64_t n) {
  const T factor = T(inv_scale);
  bool bad = false;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    T& v = t[offset_of(i, ts, ts)];
    bad |= !isfinite(v);
    v = v * factor;
  }
  if (bad) *found_inf = T(1);
}

}  // namespace

void op_unscale_check(const OpCall& call, int device) {
  namespace s = slots::UNSCALE_CHECK;
  const lltm_tensor& t = *call.tensors[s::t];
  const int64_t n = numel(t);
  DeviceGuard guard(device);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_unscale_check", [&] {
    using T = scalar_t;
    launch("unscale_check_kernel", unscale_check_kernel<T>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0,
           state(device).stream, static_cast<T*>(t.data), shape4(t), static_cast<T*>(call.tensors[s::found_inf]->data),
           call.scalars[scalars::UNSCALE_CHECK::inv_scale], n);
  });
}

LLTM_CUDA_OP(UNSCALE_CHECK, op_unscale_check);

}  // namespace lltm::cuda
