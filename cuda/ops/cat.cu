// cat on the device: one thread per element of out [O, P+Q, I], copying from
// a or b in the elements' own size (float or int32 alike).
#include "math/shape4.cuh"
#include "op_slots.h"
#include "ops/cat.cuh"
#include "ops/dtypes.h"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename E>
__global__ void cat_kernel(const E* a, Strides3 as, const E* b, Strides3 bs, E* out, Strides3 os, int64_t O,
                           int64_t P, int64_t Q, int64_t I) {
  const int64_t n = O * (P + Q) * I;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e % I, m = (e / I) % (P + Q), o = e / (I * (P + Q));
    const E v = m < P ? a[o * as.s0 + m * as.s1 + i * as.s2] : b[o * bs.s0 + (m - P) * bs.s1 + i * bs.s2];
    out[o * os.s0 + m * os.s1 + i * os.s2] = v;
  }
}

template <typename E>
void join(const OpCall& call, cudaStream_t stream) {
  namespace s = slots::CAT;
  const lltm_tensor &a = *call.tensors[s::a], &b = *call.tensors[s::b], &out = *call.tensors[s::out];
  const int64_t O = call.size('O'), P = call.size('P'), Q = call.size('Q'), I = call.size('I');
  launch("cat_kernel", cat_kernel<E>, dim3(grid_blocks(O * (P + Q) * I)), dim3(kBlockThreads), 0, stream,
         static_cast<const E*>(a.data), strides3(a), static_cast<const E*>(b.data), strides3(b),
         static_cast<E*>(out.data), strides3(out), O, P, Q, I);
}

}  // namespace

void op_cat(const OpCall& call, int device) {
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  // Every tensor has call.compute's type (the library staged other floats), so the element size says all.
  if (kDtypes[call.compute].bytes == 8)
    join<uint64_t>(call, stream);
  else
    join<uint32_t>(call, stream);
}

LLTM_CUDA_OP(CAT, op_cat);

}  // namespace lltm::cuda
