// Strided a[n][c] indexing shared by the CPU and CUDA kernels. Sizes and
// strides are carried by value so that an accessor can be passed to a CUDA
// kernel as an argument, the way PyTorch's PackedTensorAccessor is.
#pragma once

#include <cstdint>

#include "lltm.h"

#if defined(__CUDACC__)
#define LLTM_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define LLTM_HOST_DEVICE inline
#endif

namespace lltm {

template <typename T, int N>
struct Accessor;

// The innermost dimension: yields a reference to an element.
template <typename T>
struct Accessor<T, 1> {
  T* data;
  int64_t size;
  int64_t stride;

  LLTM_HOST_DEVICE T& operator[](int64_t i) const { return data[i * stride]; }
};

template <typename T, int N>
struct Accessor {
  T* data;
  int64_t sizes[N];
  int64_t strides[N];

  LLTM_HOST_DEVICE Accessor<T, N - 1> operator[](int64_t i) const {
    Accessor<T, N - 1> sub;
    sub.data = data + i * strides[0];
    copy_tail(sub);
    return sub;
  }
  LLTM_HOST_DEVICE int64_t size(int d) const { return sizes[d]; }
  LLTM_HOST_DEVICE int64_t stride(int d) const { return strides[d]; }

 private:
  template <int M>
  LLTM_HOST_DEVICE void copy_tail(Accessor<T, M>& sub) const {
    for (int d = 0; d < M; ++d) {
      sub.sizes[d] = sizes[d + 1];
      sub.strides[d] = strides[d + 1];
    }
  }
  LLTM_HOST_DEVICE void copy_tail(Accessor<T, 1>& sub) const {
    sub.size = sizes[1];
    sub.stride = strides[1];
  }
};

// A view of an lltm_tensor of rank N (validated beforehand) with element type T.
template <typename T, int N>
inline Accessor<T, N> accessor(const lltm_tensor& t) {
  Accessor<T, N> a;
  a.data = static_cast<T*>(t.data);
  for (int d = 0; d < N; ++d) {
    a.sizes[d] = t.sizes[d];
    a.strides[d] = t.strides[d];
  }
  return a;
}

template <typename T>
inline Accessor<T, 1> accessor1(const lltm_tensor& t) {
  return Accessor<T, 1>{static_cast<T*>(t.data), t.sizes[0], t.strides[0]};
}

}  // namespace lltm
