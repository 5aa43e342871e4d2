// The two reductions of a row's log-softmax, shared by cross_entropy and its
// backward so that both compute the same values in the same order: the
// row's largest logit, and the sum of exp(logit - largest) over the row
// (each term also stored where `terms` is given, for the backward's softmax).
#pragma once

#include <cmath>
#include <cstdint>

namespace lltm::cpu {

template <typename T>
struct RowExps {
  T max, sum;
};

template <typename T>
inline RowExps<T> row_exps(const T* row, int64_t stride, int64_t V, T* terms = nullptr, int64_t terms_stride = 0) {
  T max = row[0];
  for (int64_t v = 1; v < V; ++v) max = std::fmax(max, row[v * stride]);
  T sum = 0;
  for (int64_t v = 0; v < V; ++v) {
    const T e = std::exp(row[v * stride] - max);
    if (terms != nullptr) terms[v * terms_stride] = e;
    sum += e;
  }
  return {max, sum};
}

}  // namespace lltm::cpu
