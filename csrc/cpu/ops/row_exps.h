// The two reductions of a row's log-softmax, shared by cross_entropy and its
// backward so that both compute the same values in the same order: the
// row's largest logit, and the sum of exp(logit - largest) over the row
// (each term also stored where `terms` is given, for the backward's softmax).
// float32 rows of consecutive elements take the vector exponential of
// vector_math.h (a few ulps, as the cell's activations), a vector of
// partial sums at a time: the C library's expf is a scalar call that cost
// more than the rest of the char LM's loss.
#pragma once

#include <cmath>
#include <cstdint>

#include "../vector_math.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

template <typename T>
struct RowExps {
  T max, sum;
};

template <typename T>
inline RowExps<T> row_exps_strided(const T* row, int64_t stride, int64_t V, T* terms, int64_t terms_stride) {
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

// A float32 row of consecutive elements (and terms, where given): whole
// vectors, then the last V % lanes elements one at a time; the vector of
// partial sums is added up lane by lane in order, then the tail.
inline RowExps<float> row_exps_contiguous(const float* row, int64_t V, float* terms) {
  constexpr int64_t L = Vector<float>::lanes;
  const int64_t whole = V / L * L;
  float max = row[0];
  if (whole > 0) {
    FloatVector m = load<FloatVector>(row);
    for (int64_t v = L; v < whole; v += L) m = at_least(m, load<FloatVector>(row + v));
    for (int64_t i = 0; i < L; ++i) max = std::fmax(max, m[i]);
  }
  for (int64_t v = whole; v < V; ++v) max = std::fmax(max, row[v]);
  FloatVector partial{};
  for (int64_t v = 0; v < whole; v += L) {
    const FloatVector e = fexp(load<FloatVector>(row + v) - max);
    if (terms != nullptr) store(terms + v, e);
    partial += e;
  }
  float sum = 0;
  for (int64_t i = 0; i < L; ++i) sum += partial[i];
  for (int64_t v = whole; v < V; ++v) {
    const float e = fexp(row[v] - max);
    if (terms != nullptr) terms[v] = e;
    sum += e;
  }
  return {max, sum};
}

template <typename T>
inline RowExps<T> row_exps(const T* row, int64_t stride, int64_t V, T* terms = nullptr, int64_t terms_stride = 0) {
  if constexpr (std::is_same_v<T, float>)
    if (stride == 1 && (terms == nullptr || terms_stride == 1)) return row_exps_contiguous(row, V, terms);
  return row_exps_strided(row, stride, V, terms, terms_stride);
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
