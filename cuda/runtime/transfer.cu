// Byte transfers and synchronisation, on the device's stream. The host side
// is the caller's pageable memory: each transfer finishes before returning.
#include "runtime/device.h"
#include "runtime/transfer.h"

namespace lltm::cuda {

void read(void* host_dst, const void* src, uint64_t bytes, int device) {
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  LLTM_CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream));
  LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void write(void* dst, const void* host_src, uint64_t bytes, int device) {
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  LLTM_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream));
  LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void synchronize(int device) {
  DeviceGuard guard(device);
  LLTM_CUDA_CHECK(cudaStreamSynchronize(state(device).stream));
}

}  // namespace lltm::cuda
