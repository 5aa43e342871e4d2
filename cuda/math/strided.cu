#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "dispatch.h"
#include "lltm_args.h"
#include "math/dtype.cuh"
#include "math/pack.cuh"
#include "math/shape4.cuh"
#include "math/strided.h"
#include "ops/dtypes.h"
#include "runtime/cuda_check.h"
#include "runtime/launch.h"

namespace lltm::cuda {

namespace {

template <typename T>
__global__ void copy_kernel(T* dst, Shape4 dst_shape, const T* src, Shape4 src_shape, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[offset_of(i, dst_shape, dst_shape)] = src[offset_of(i, dst_shape, src_shape)];
}

template <typename D, typename S>
__global__ void convert_kernel(D* dst, Shape4 dst_shape, const S* src, Shape4 src_shape, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[offset_of(i, dst_shape, dst_shape)] = convert<D>(src[offset_of(i, dst_shape, src_shape)]);
}

// Eight elements a thread at a time (math/pack.cuh), where both tensors are dense and aligned to that.
template <typename D, typename S>
__global__ void convert_packs_kernel(Pack<D>* dst, const Pack<S>* src, int64_t packs) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < packs; i += int64_t(gridDim.x) * blockDim.x) {
    const Pack<S> in = src[i];
    Pack<D> out;
#pragma unroll
    for (int j = 0; j < kPack; ++j) out.v[j] = convert<D>(in.v[j]);
    dst[i] = out;
  }
}

// A dense run of n elements: offsets are the indices.
Shape4 dense_run(int64_t n) { return {{1, 1, 1, n}, {0, 0, 0, 1}, true, n <= int64_t(UINT32_MAX)}; }

// dst = src converted, both dense: whole packs where both are aligned to them, the rest one element a thread.
template <typename D, typename S>
void convert_dense(D* dst, const S* src, int64_t n, cudaStream_t stream) {
  const int64_t packs = pack_aligned<D>(dst) && pack_aligned<S>(src) ? n / kPack : 0;
  if (packs > 0)
    launch("convert_packs_kernel", convert_packs_kernel<D, S>, dim3(grid_blocks(packs)), dim3(kBlockThreads), 0,
           stream, reinterpret_cast<Pack<D>*>(dst), reinterpret_cast<const Pack<S>*>(src), packs);
  const int64_t done = packs * kPack, rest = n - done;
  if (rest > 0)
    launch("convert_kernel", convert_kernel<D, S>, dim3(grid_blocks(rest)), dim3(kBlockThreads), 0, stream,
           dst + done, dense_run(rest), src + done, dense_run(rest), rest);
}

template <typename T>
__global__ void fill_kernel(T* dst, Shape4 shape, T value, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[offset_of(i, shape, shape)] = value;
}

template <typename T>
__global__ void axpy_kernel(T* y, Shape4 y_shape, T alpha, const T* x, Shape4 x_shape, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[offset_of(i, y_shape, y_shape)] += alpha * x[offset_of(i, y_shape, x_shape)];
}

// An unsigned integer type of `bytes` bytes, for copies of elements as they are.
template <typename Body>
void with_bits_type(int64_t bytes, Body&& body) {
  switch (bytes) {
    case 1:
      return body(TypeTag<uint8_t>{});
    case 2:
      return body(TypeTag<uint16_t>{});
    case 4:
      return body(TypeTag<uint32_t>{});
    case 8:
      return body(TypeTag<uint64_t>{});
    default:
      fail(LLTM_ERR_INVALID_DTYPE, "lltm_copy: no element type of " + std::to_string(bytes) + " bytes");
  }
}

}  // namespace

void strided_copy(const lltm_tensor& dst, const lltm_tensor& src, int32_t dtype, cudaStream_t stream) {
  const int64_t n = numel(dst);
  if (is_contiguous(dst) && is_contiguous(src)) {
    LLTM_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, size_t(n) * size_t(dtype_info(dtype)->bytes),
                                    cudaMemcpyDeviceToDevice, stream));
    return;
  }
  with_bits_type(dtype_info(dtype)->bytes, [&](auto bits) {
    using B = typename decltype(bits)::type;
    launch("copy_kernel", copy_kernel<B>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0, stream,
           static_cast<B*>(dst.data), shape4(dst), static_cast<const B*>(src.data), shape4(src), n);
  });
}

void strided_convert(const lltm_tensor& dst, const lltm_tensor& src, cudaStream_t stream) {
  const int64_t n = numel(dst);
  if (dst.dtype == src.dtype) return strided_copy(dst, src, int32_t(dst.dtype), stream);
  with_float_type(int32_t(dst.dtype), "lltm_copy", [&](auto to) {
    with_float_type(int32_t(src.dtype), "lltm_copy", [&](auto from) {
      using D = typename decltype(to)::type;
      using S = typename decltype(from)::type;
      if constexpr (!std::is_same_v<D, S>) {
        if (is_contiguous(dst) && is_contiguous(src))
          return convert_dense(static_cast<D*>(dst.data), static_cast<const S*>(src.data), n, stream);
        launch("convert_kernel", convert_kernel<D, S>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0, stream,
               static_cast<D*>(dst.data), shape4(dst), static_cast<const S*>(src.data), shape4(src), n);
      }
    });
  });
}

void strided_fill(const lltm_tensor& dst, double value, cudaStream_t stream) {
  const int64_t n = numel(dst);
  with_float_type(int32_t(dst.dtype), "lltm_fill", [&](auto type) {
    using T = typename decltype(type)::type;
    const T v = RoundTo<T>::from(value);
    // Zeros (a model's gradients before each step) as a memset: at the
    // memory's rate, where a thread an element reaches about half of it.
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    if (is_contiguous(dst) && std::all_of(bytes, bytes + sizeof(T), [](unsigned char b) { return b == 0; })) {
      LLTM_CUDA_CHECK(cudaMemsetAsync(dst.data, 0, size_t(n) * sizeof(T), stream));
      return;
    }
    launch("fill_kernel", fill_kernel<T>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0, stream,
           static_cast<T*>(dst.data), shape4(dst), v, n);
  });
}

void strided_axpy(const lltm_tensor& y, double alpha, const lltm_tensor& x, int32_t dtype, cudaStream_t stream) {
  const int64_t n = numel(y);
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_axpy", [&] {
    launch("axpy_kernel", axpy_kernel<scalar_t>, dim3(grid_blocks(n)), dim3(kBlockThreads), 0, stream,
           static_cast<scalar_t*>(y.data), shape4(y), scalar_t(alpha), static_cast<const scalar_t*>(x.data),
           shape4(x), n);
  });
}

}  // namespace lltm::cuda
