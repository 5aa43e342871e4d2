// Checks of values only the device holds (indices, sampling weights), made
// before an op writes anything: a kernel marks the first bad position in a
// device word, which the host reads back (a synchronisation) and turns into
// the same refusal as the CPU's (ops/refusals.h, by the same rule). A
// captured call cannot wait for the device: there the check is left out,
// and the kernels skip what is out of range.
#pragma once

#include <cstdint>

#include "ops/refusals.h"
#include "runtime/capture.h"
#include "runtime/cuda_check.h"
#include "runtime/device.h"
#include "runtime/launch.h"

namespace lltm::cuda {

constexpr unsigned long long kNoneBad = ~0ull;

// Marks the first i whose ids[i * stride] `rule` refuses.
template <int = 0>
__global__ void first_bad_index_kernel(const int32_t* ids, int64_t stride, int64_t n, ops::IndexRule rule,
                                       unsigned long long* first) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    if (rule.refuses(ids[i * stride])) atomicMin(first, (unsigned long long)i);
}

// A device word set to kNoneBad, for kernels to atomicMin into, and its value read back.
class BadMark {
 public:
  explicit BadMark(cudaStream_t stream) : word_(sizeof(unsigned long long)), stream_(stream) {
    LLTM_CUDA_CHECK(cudaMemsetAsync(word_.as<void>(), 0xff, sizeof(unsigned long long), stream));
  }
  unsigned long long* device() const { return word_.as<unsigned long long>(); }
  // Waits for the stream: the first marked position, or kNoneBad.
  unsigned long long read() const {
    unsigned long long host = kNoneBad;
    LLTM_CUDA_CHECK(cudaMemcpyAsync(&host, word_.as<void>(), sizeof host, cudaMemcpyDeviceToHost, stream_));
    LLTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return host;
  }

 private:
  Scratch word_;
  cudaStream_t stream_;
};

// The device-side twin of ops::check_indices: refuses the first of `ids`'
// n values (int32, 1-D, any stride, on the current device) that `rule`
// refuses, naming it as argument `name` of `fn`. It waits for the stream (a
// bad index must be refused before the op writes anything, as on the CPU);
// the value is read back only on that refusal.
inline void check_indices_on_device(const char* fn, const char* name, const lltm_tensor& ids, int64_t n,
                                    const ops::IndexRule& rule, cudaStream_t stream) {
  if (recording(stream)) return;
  BadMark mark(stream);
  launch("first_bad_index_kernel", first_bad_index_kernel<>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0, stream,
         static_cast<const int32_t*>(ids.data), ids.strides[0], n, rule, mark.device());
  const unsigned long long first = mark.read();
  if (first == kNoneBad) return;
  int32_t value = 0;
  LLTM_CUDA_CHECK(cudaMemcpyAsync(&value, static_cast<const int32_t*>(ids.data) + int64_t(first) * ids.strides[0],
                                  sizeof value, cudaMemcpyDeviceToHost, stream));
  LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));
  ops::refuse_index(fn, name, int64_t(first), value, rule);
}

}  // namespace lltm::cuda
