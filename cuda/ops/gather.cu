// gather on the device: the indices checked first (ops/refusals.h's
// refusal, nothing written), then one thread per element of out copying
// x[o, index, i] in the elements' own size (float or int32 alike); an index
// out of range is skipped, so no path reads outside x.
#include "math/index_check.cuh"
#include "math/shape4.cuh"
#include "op_slots.h"
#include "ops/dtypes.h"
#include "ops/gather.cuh"
#include "ops/refusals.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

template <typename E>
__global__ void gather_kernel(const E* x, Strides3 xs, const int32_t* index, E* out, Strides3 os, int64_t O,
                              int64_t P, int64_t Q, int64_t I) {
  const int64_t n = O * Q * I;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e % I, q = (e / I) % Q, o = e / (I * Q);
    const int64_t p = index[e];  // contiguous [O, Q, I]
    if (p >= 0 && p < P) out[o * os.s0 + q * os.s1 + i * os.s2] = x[o * xs.s0 + p * xs.s1 + i * xs.s2];
  }
}

template <typename E>
void gather(const OpCall& call, cudaStream_t stream) {
  namespace s = slots::GATHER;
  const lltm_tensor &x = *call.tensors[s::x], &index = *call.tensors[s::index], &out = *call.tensors[s::out];
  const int64_t O = call.size('O'), P = call.size('P'), Q = call.size('Q'), I = call.size('I');
  launch("gather_kernel", gather_kernel<E>, dim3(grid_blocks(O * Q * I)), dim3(kBlockThreads), 0, stream,
         static_cast<const E*>(x.data), strides3(x),
         static_cast<const int32_t*>(index.data), static_cast<E*>(out.data),
         strides3(out), O, P, Q, I);
}

}  // namespace

void op_gather(const OpCall& call, int device) {
  namespace s = slots::GATHER;
  const lltm_tensor& index = *call.tensors[s::index];
  const int64_t n = call.size('O') * call.size('Q') * call.size('I');
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  check_indices_on_device("lltm_gather", "index", ops::flat_indices(index, n), n, {call.size('P'), false, 0}, stream);
  // Every tensor has call.compute's type (the library staged other floats), so the element size says all.
  if (kDtypes[call.compute].bytes == 8)
    gather<uint64_t>(call, stream);
  else
    gather<uint32_t>(call, stream);
}

LLTM_CUDA_OP(GATHER, op_gather);

}  // namespace lltm::cuda
