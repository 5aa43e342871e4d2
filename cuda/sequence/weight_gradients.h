// The sequence backward's parameter gradients over all T * B rows in one
// launch, for the smallest sizes the cluster recurrence runs: there cuBLAS
// takes two launches per product (split-K and its reduction) and the bias a
// third, each costing more than its arithmetic.
#pragma once

#include <cstdint>

#include "math/gemm.h"

namespace lltm::cuda {

// d_weights [G, S + F] (+)= dG^T [H, X] and d_bias [G] (+)= dG's column sums.
template <typename T>
struct WeightGradients {
  Matrix<const T> dG;  // [R, G]: every step's gate gradients
  Matrix<const T> H;   // [R, S]: the h each row's step read
  Matrix<const T> X;   // [R, F]: each row's input
  Matrix<T> d_weights;
  T* d_bias;
  int64_t d_bias_stride;
  bool accumulate;
};

// Whether these sizes (rows R, gates G, d_weights' S + F columns) suit the
// one launch; it needs thread-block clusters (sm_90 on).
bool weight_gradients_fit(int64_t rows, int64_t gates, int64_t columns);

template <typename T>
void weight_gradients(const WeightGradients<T>& a, cudaStream_t stream);

}  // namespace lltm::cuda
