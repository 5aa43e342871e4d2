// scale_by_norm on the device: every thread reads total_sq where it lives
// and scales its elements by min(1, max_norm / (sqrt(total_sq) + 1e-6)), so
// that clipping needs no host read; the first thread writes the norm when asked.
#include "dispatch.h"
#include "lltm_args.h"
#include "math/shape4.cuh"
#include "op_slots.h"
#include "ops/scale_by_norm.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void scale_by_norm_kernel(T* t, Shape4 ts, const T* total_sq, T* norm_out, double max_norm, int64_t n) {
  const double norm = sqrt(double(*total_sq));
  const double factor = max_norm / (norm + 1e-6);
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (first == 0 && norm_out != nullptr) *norm_out = T(norm);
  if (factor >= 1.0) return;
  for (int64_t i = first; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    T& v = t[offset_of(i, ts, ts)];
    v = v * T(factor);
  }
}

}  // namespace

void op_scale_by_norm(const OpCall& call, int device) {
  namespace s = slots::SCALE_BY_NORM;
  const lltm_tensor& t = *call.tensors[s::t];
  const lltm_tensor* norm = call.tensors[s::norm];
  const int64_t n = numel(t);
  DeviceGuard guard(device);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_scale_by_norm", [&] {
    using T = scalar_t;
    launch("scale_by_norm_kernel", scale_by_norm_kernel<T>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0,
           state(device).stream, static_cast<T*>(t.data), shape4(t),
           static_cast<const T*>(call.tensors[s::total_sq]->data), norm != nullptr ? static_cast<T*>(norm->data) : nullptr,
           call.scalars[scalars::SCALE_BY_NORM::max_norm], n);
  });
}

LLTM_CUDA_OP(SCALE_BY_NORM, op_scale_by_norm);

}  // namespace lltm::cuda
