// A sequence call's per-sample lengths, checked on the device before a pass
// runs: the first outside [1, T] is refused as the CPU refuses it
// (ops/refusals.h), nothing written.
#pragma once

#include <cstdint>

#include "math/index_check.cuh"
#include "ops/refusals.h"
#include "sequence/cell.cuh"

namespace lltm::cuda {

template <int = 0>
__global__ void first_bad_length_kernel(const int32_t* lengths, int64_t stride, int64_t n, int64_t steps,
                                        unsigned long long* first) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t v = lengths[i * stride];
    if (v < 1 || v > steps) atomicMin(first, (unsigned long long)i);
  }
}

// The kernels' view of `lengths` (null: every sample runs T steps), after its check.
inline SampleLengths checked_lengths(const lltm_tensor* lengths, int64_t steps, const char* fn, cudaStream_t stream) {
  if (lengths == nullptr) return {nullptr, 0};
  const int32_t* data = static_cast<const int32_t*>(lengths->data);
  const int64_t n = lengths->sizes[0], stride = lengths->strides[0];
  // A captured call cannot wait for the device (math/index_check.cuh): unchecked there.
  if (recording(stream)) return {data, stride};
  BadMark mark(stream);
  launch("first_bad_length_kernel", first_bad_length_kernel<>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0, stream,
         data, stride, n, steps, mark.device());
  const unsigned long long first = mark.read();
  if (first != kNoneBad) {
    int32_t value = 0;
    LLTM_CUDA_CHECK(cudaMemcpyAsync(&value, data + int64_t(first) * stride, sizeof value, cudaMemcpyDeviceToHost,
                                    stream));
    LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));
    ops::refuse_length(fn, int64_t(first), value, steps);
  }
  return {data, stride};
}

}  // namespace lltm::cuda
