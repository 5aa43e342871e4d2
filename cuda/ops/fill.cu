// The value is rounded to dst's own dtype once, on the host: the half types
// are filled as they are, without a float32 copy; int32 (an integer value,
// checked by the library) by a kernel of its own.
#include "lltm_args.h"
#include "math/shape4.cuh"
#include "math/strided.h"
#include "op_slots.h"
#include "ops/fill.cuh"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <int = 0>
__global__ void fill_int32_kernel(int32_t* dst, Shape4 shape, int32_t value, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[offset_of(i, shape, shape)] = value;
}

}  // namespace

void op_fill(const OpCall& call, int device) {
  DeviceGuard guard(device);
  const lltm_tensor& dst = *call.tensors[slots::FILL::dst];
  const double value = call.scalars[scalars::FILL::value];
  if (dst.dtype == LLTM_INT32) {
    const int64_t n = numel(dst);
    launch("fill_int32_kernel", fill_int32_kernel<>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0,
           state(device).stream, static_cast<int32_t*>(dst.data), shape4(dst), int32_t(value), n);
    return;
  }
  strided_fill(dst, value, state(device).stream);
}

LLTM_CUDA_OP(FILL, op_fill);

}  // namespace lltm::cuda
