// Strided a[n][c] indexing shared by the CPU and CUDA kernels. Sizes and
// strides are carried by value so that an accessor can be passed to a CUDA
// kernel as an argument, the way PyTorch's PackedTensorAccessor is; like
// PackedTensorAccessor32, `Index` may be int32_t where every offset fits
// (fits_int32), which halves a GPU kernel's index arithmetic and arguments.
#pragma once

#include <cstdint>

#include "lltm.h"

#if defined(__CUDACC__)
#define LLTM_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define LLTM_HOST_DEVICE inline
#endif

namespace lltm {

template <typename T, int N, typename Index = int64_t>
struct Accessor;

// The innermost dimension: yields a reference to an element.
template <typename T, typename Index>
struct Accessor<T, 1, Index> {
  T* data;
  Index size;
  Index stride;

  LLTM_HOST_DEVICE T& operator[](Index i) const { return data[i * stride]; }
};

template <typename T, int N, typename Index>
struct Accessor {
  T* data;
  Index sizes[N];
  Index strides[N];

  LLTM_HOST_DEVICE Accessor<T, N - 1, Index> operator[](Index i) const {
    Accessor<T, N - 1, Index> sub;
    sub.data = data + i * strides[0];
    copy_tail(sub);
    return sub;
  }
  LLTM_HOST_DEVICE Index size(int d) const { return sizes[d]; }
  LLTM_HOST_DEVICE Index stride(int d) const { return strides[d]; }

 private:
  template <int M>
  LLTM_HOST_DEVICE void copy_tail(Accessor<T, M, Index>& sub) const {
    for (int d = 0; d < M; ++d) {
      sub.sizes[d] = sizes[d + 1];
      sub.strides[d] = strides[d + 1];
    }
  }
  LLTM_HOST_DEVICE void copy_tail(Accessor<T, 1, Index>& sub) const {
    sub.size = sizes[1];
    sub.stride = strides[1];
  }
};

// A view of an lltm_tensor of rank N (validated beforehand) with element type T.
template <typename T, int N, typename Index = int64_t>
inline Accessor<T, N, Index> accessor(const lltm_tensor& t) {
  Accessor<T, N, Index> a;
  a.data = static_cast<T*>(t.data);
  for (int d = 0; d < N; ++d) {
    a.sizes[d] = Index(t.sizes[d]);
    a.strides[d] = Index(t.strides[d]);
  }
  return a;
}

// accessor(*t) where t is given; an empty view (null data) for an absent optional tensor.
template <typename T, int N, typename Index = int64_t>
inline Accessor<T, N, Index> optional_accessor(const lltm_tensor* t) {
  return t ? accessor<T, N, Index>(*t) : Accessor<T, N, Index>{};
}

template <typename T, typename Index = int64_t>
inline Accessor<T, 1, Index> accessor1(const lltm_tensor& t) {
  return Accessor<T, 1, Index>{static_cast<T*>(t.data), Index(t.sizes[0]), Index(t.strides[0])};
}

// Whether every element's offset, and every size, of a validated tensor fits in int32_t.
inline bool fits_int32(const lltm_tensor& t) {
  int64_t last = 0;
  for (int64_t d = 0; d < t.ndim; ++d) {
    if (t.sizes[d] > INT32_MAX || t.strides[d] > INT32_MAX) return false;
    last += (t.sizes[d] - 1) * t.strides[d];
    if (last > INT32_MAX) return false;
  }
  return true;
}

}  // namespace lltm
