// Copies run on the device's stream; the conversion between dtypes runs on
// the device too, so that the host side moves its own bytes as they are.
#include "lltm_args.h"
#include "math/strided.h"
#include "ops/copy.cuh"
#include "ops/dtypes.h"
#include "runtime/device.h"
#include "runtime/pinned_pool.h"

namespace lltm::cuda {

namespace {

size_t bytes_of(const lltm_tensor& t) { return size_t(numel(t) * dtype_info(t.dtype)->bytes); }

}  // namespace

void copy(const lltm_tensor& dst, bool dst_on_device, int dst_device, const lltm_tensor& src, bool src_on_device,
          int src_device, bool non_blocking) {
  const bool same_dtype = dst.dtype == src.dtype;
  if (dst_on_device && src_on_device && dst_device == src_device) {
    DeviceGuard guard(dst_device);
    strided_convert(dst, src, state(dst_device).stream);
    return;
  }
  if (dst_on_device && src_on_device) {
    // Across GPUs: gather on the source, move the bytes, convert and scatter on the destination.
    const size_t bytes = bytes_of(src);
    cudaStream_t src_stream, dst_stream;
    {
      DeviceGuard guard(src_device);
      src_stream = state(src_device).stream;
    }
    DeviceGuard guard(dst_device);
    dst_stream = state(dst_device).stream;
    Scratch staged(bytes);
    {
      DeviceGuard on_src(src_device);
      Scratch gathered(bytes);
      strided_convert(contiguous_like(src, gathered.as<void>()), src, src_stream);
      LLTM_CUDA_CHECK(cudaStreamSynchronize(src_stream));
      LLTM_CUDA_CHECK(cudaStreamSynchronize(dst_stream));
      LLTM_CUDA_CHECK(cudaMemcpyPeer(staged.as<void>(), dst_device, gathered.as<void>(), src_device, bytes));
    }
    strided_convert(dst, contiguous_like(src, staged.as<void>()), dst_stream);
    return;
  }
  // One side is contiguous host memory (liblltm stages strided host tensors).
  const int device = dst_on_device ? dst_device : src_device;
  DeviceGuard guard(device);
  cudaStream_t stream = state(device).stream;
  if (dst_on_device) {
    if (same_dtype && is_contiguous(dst)) {
      LLTM_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, bytes_of(dst), cudaMemcpyHostToDevice, stream));
    } else {
      Scratch staged(bytes_of(src));
      LLTM_CUDA_CHECK(cudaMemcpyAsync(staged.as<void>(), src.data, bytes_of(src), cudaMemcpyHostToDevice, stream));
      strided_convert(dst, contiguous_like(src, staged.as<void>()), stream);
    }
  } else if (same_dtype && is_contiguous(src)) {
    LLTM_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, bytes_of(src), cudaMemcpyDeviceToHost, stream));
  } else {
    Scratch staged(bytes_of(dst));
    strided_convert(contiguous_like(dst, staged.as<void>()), src, stream);
    LLTM_CUDA_CHECK(cudaMemcpyAsync(dst.data, staged.as<void>(), bytes_of(dst), cudaMemcpyDeviceToHost, stream));
  }
  // From pinned memory the copy may stay queued: the pool keeps the block from new work until it has run.
  // Pageable memory, and whatever the caller reads next, must be done with on return.
  if (non_blocking && dst_on_device && is_pinned(src.data, bytes_of(src))) {
    pinned_record_use(src.data, stream, device);
    return;
  }
  LLTM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace lltm::cuda
