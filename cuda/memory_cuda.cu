// Device memory: pooled allocation, copies (device to device on one GPU or
// two, contiguous host memory to and from strided device memory), fill,
// byte transfers and synchronisation, all on the device's stream.
#include "device.h"
#include "lltm_args.h"
#include "memory_cuda.h"
#include "strided.h"

namespace lltm::cuda {

void* alloc(uint64_t bytes, int device) {
  DeviceGuard guard(device);
  void* p = nullptr;
  const cudaError_t e = cudaMallocAsync(&p, bytes, state(device).stream);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    fail(LLTM_ERR_OUT_OF_MEMORY, "lltm_alloc: out of memory on cuda:" + std::to_string(device) + " allocating " +
                                     std::to_string(bytes) + " bytes");
  }
  check(e, "cudaMallocAsync");
  return p;
}

void free(void* data, int device) {
  DeviceGuard guard(device);
  LLTM_CUDA_CHECK(cudaFreeAsync(data, state(device).stream));
}

void copy(const lltm_tensor& dst, bool dst_on_device, int dst_device, const lltm_tensor& src, bool src_on_device,
          int src_device, int32_t dtype) {
  const size_t bytes = size_t(numel(dst) * element_size(dtype));
  if (dst_on_device && src_on_device && dst_device == src_device) {
    DeviceGuard guard(dst_device);
    strided_copy(dst, src, dtype, state(dst_device).stream);
    return;
  }
  if (dst_on_device && src_on_device) {
    // Across GPUs: gather on the source, move the bytes, scatter on the destination.
    cudaStream_t src_stream, dst_stream;
    {
      DeviceGuard guard(src_device);
      src_stream = state(src_device).stream;
    }
    DeviceGuard guard(dst_device);
    dst_stream = state(dst_device).stream;
    Scratch staged(bytes, dst_stream);
    {
      DeviceGuard on_src(src_device);
      Scratch gathered(bytes, src_stream);
      strided_copy(contiguous_like(src, gathered.as<void>()), src, dtype, src_stream);
      LLTM_CUDA_CHECK(cudaStreamSynchronize(src_stream));
      LLTM_CUDA_CHECK(cudaStreamSynchronize(dst_stream));
      LLTM_CUDA_CHECK(cudaMemcpyPeer(staged.as<void>(), dst_device, gathered.as<void>(), src_device, bytes));
    }
    strided_copy(dst, contiguous_like(dst, staged.as<void>()), dtype, dst_stream);
    return;
  }
  // One side is contiguous host memory (liblltm stages strided host tensors).
  const int device = dst_on_device ? dst_device : src_device;
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  if (dst_on_device) {
    if (is_contiguous(dst)) {
      LLTM_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyHostToDevice, stream));
    } else {
      Scratch staged(bytes, stream);
      LLTM_CUDA_CHECK(cudaMemcpyAsync(staged.as<void>(), src.data, bytes, cudaMemcpyHostToDevice, stream));
      strided_copy(dst, contiguous_like(dst, staged.as<void>()), dtype, stream);
    }
  } else if (is_contiguous(src)) {
    LLTM_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyDeviceToHost, stream));
  } else {
    Scratch staged(bytes, stream);
    strided_copy(contiguous_like(src, staged.as<void>()), src, dtype, stream);
    LLTM_CUDA_CHECK(cudaMemcpyAsync(dst.data, staged.as<void>(), bytes, cudaMemcpyDeviceToHost, stream));
  }
  // The host side is the caller's pageable memory: finish before returning.
  LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void fill(const lltm_tensor& dst, double value, int32_t dtype, int device) {
  DeviceGuard guard(device);
  strided_fill(dst, value, dtype, state(device).stream);
}

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
