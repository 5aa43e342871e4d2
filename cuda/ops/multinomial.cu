// multinomial on the device: every row's weights checked first (a marked
// row read back and refused as on the CPU, nothing written), then one
// thread per row drawing with the generator the CPU shares (counter_rng.h),
// so that both devices draw the same indices.
#include "counter_rng.h"
#include "dispatch.h"
#include "math/index_check.cuh"
#include "op_slots.h"
#include "ops/multinomial.cuh"
#include "ops/refusals.h"
#include "runtime/op_registry.h"

namespace lltm::cuda {

namespace {

// Marks 2 * row + 1 for a row with a negative, infinite or NaN weight (or an infinite sum), 2 * row for one with no positive weight.
template <typename T>
__global__ void check_weights_kernel(const T* p, int64_t p0, int64_t p1, int64_t N, int64_t V,
                                     unsigned long long* first) {
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < N; n += int64_t(gridDim.x) * blockDim.x) {
    double total = 0;
    bool bad = false;
    for (int64_t v = 0; v < V; ++v) {
      const double w = double(p[n * p0 + v * p1]);
      bad = bad || !(w >= 0) || isinf(w);
      total += w;
    }
    if (bad || isinf(total))
      atomicMin(first, (unsigned long long)(2 * n + 1));
    else if (!(total > 0))
      atomicMin(first, (unsigned long long)(2 * n));
  }
}

template <typename T>
__global__ void draw_kernel(const T* p, int64_t p0, int64_t p1, int32_t* out, int64_t os, int64_t N, int64_t V,
                            uint64_t seed, uint64_t offset) {
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < N; n += int64_t(gridDim.x) * blockDim.x) {
    const T* row = p + n * p0;
    double total = 0;
    for (int64_t v = 0; v < V; ++v) total += double(row[v * p1]);
    const auto at = [&](int64_t v) { return row[v * p1]; };
    out[n * os] = draw_index(at, V, total, uniform01(seed, offset, uint64_t(n)));
  }
}

}  // namespace

void op_multinomial(const OpCall& call, int device) {
  namespace s = slots::MULTINOMIAL;
  namespace k = scalars::MULTINOMIAL;
  const lltm_tensor &p = *call.tensors[s::probs], &out = *call.tensors[s::indices];
  const int64_t N = call.size('N'), V = call.size('V');
  const uint64_t seed = uint64_t(call.scalars[k::seed]), offset = uint64_t(call.scalars[k::offset]);
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_multinomial", [&] {
    using T = scalar_t;
    const T* pd = static_cast<const T*>(p.data);
    if (!recording(stream)) {
      BadMark mark(stream);
      launch("check_weights_kernel", check_weights_kernel<T>, dim3(grid_blocks(N)), dim3(kBlockThreads), 0, stream,
             pd, p.strides[0], p.strides[1], N, V, mark.device());
      const unsigned long long first = mark.read();
      if (first != kNoneBad) ops::refuse_weights("lltm_multinomial", "probs", int64_t(first / 2), (first & 1) != 0);
    }
    launch("draw_kernel", draw_kernel<T>, dim3(grid_blocks(N)), dim3(kBlockThreads), 0, stream, pd, p.strides[0],
           p.strides[1], static_cast<int32_t*>(out.data), out.strides[0], N, V, seed, offset);
  });
}

LLTM_CUDA_OP(MULTINOMIAL, op_multinomial);

}  // namespace lltm::cuda
