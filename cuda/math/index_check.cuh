// Checks of values only the device holds (indices, sampling weights), made
// before an op writes anything: a kernel marks the first bad position in a
// device word, which the host reads back (a synchronisation) and turns into
// the same refusal as the CPU's (ops/refusals.h). A captured call cannot
// wait for the device: there the check is left out, and the kernels skip
// what is out of range.
#pragma once

#include <cstdint>

#include "runtime/capture.h"
#include "runtime/cuda_check.h"
#include "runtime/device.h"
#include "runtime/launch.h"

namespace lltm::cuda {

constexpr unsigned long long kNoneBad = ~0ull;

// Marks the first i whose ids[i * stride] is outside [0, bound) and is not `ignore` (when has_ignore).
template <int = 0>
__global__ void first_bad_index_kernel(const int32_t* ids, int64_t stride, int64_t n, int64_t bound, int64_t ignore,
                                       bool has_ignore, unsigned long long* first) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t v = ids[i * stride];
    if ((v < 0 || v >= bound) && !(has_ignore && v == ignore)) atomicMin(first, (unsigned long long)i);
  }
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

// The position of the first of ids' n values (int32, 1-D, any stride) outside [0, bound) other than
// *ignore, with that value; position -1 when every one is in range.
struct BadIndex {
  int64_t position;
  int32_t value;
};

inline BadIndex first_bad_index(const lltm_tensor& ids, int64_t n, int64_t bound, const int64_t* ignore,
                                cudaStream_t stream) {
  if (recording(stream)) return {-1, 0};
  BadMark mark(stream);
  launch("first_bad_index_kernel", first_bad_index_kernel<>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0, stream,
         static_cast<const int32_t*>(ids.data), ids.strides[0], n, bound, ignore != nullptr ? *ignore : 0,
         ignore != nullptr, mark.device());
  const unsigned long long first = mark.read();
  if (first == kNoneBad) return {-1, 0};
  int32_t value = 0;
  LLTM_CUDA_CHECK(cudaMemcpyAsync(&value, static_cast<const int32_t*>(ids.data) + int64_t(first) * ids.strides[0],
                                  sizeof value, cudaMemcpyDeviceToHost, stream));
  LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));
  return {int64_t(first), value};
}

}  // namespace lltm::cuda
