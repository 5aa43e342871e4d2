// Element-wise updates on the host: gradient accumulation and optimizer steps.
#include <cmath>

#include "../dispatch.h"
#include "kernels.h"
#include "strided_cpu.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void axpy_typed(const lltm_tensor& y, T alpha, const lltm_tensor& x) {
  const int64_t ys = inner_stride(y), xs = inner_stride(x);
  for_each_row(y, [&](int64_t a, int64_t b, int64_t c, int64_t n) {
    T* yr = static_cast<T*>(y.data) + row_offset(y, a, b, c);
    const T* xr = static_cast<const T*>(x.data) + row_offset(x, a, b, c);
    for (int64_t i = 0; i < n; ++i) yr[i * ys] += alpha * xr[i * xs];
  });
}

template <typename T>
void sgd_typed(const SgdArgs& a) {
  const int64_t n = numel(*a.param);
  T* p = static_cast<T*>(a.param->data);
  const T* g = static_cast<const T*>(a.grad->data);
  const T lr = T(a.lr), momentum = T(a.momentum);
  if (a.momentum == 0.0) {
    for (int64_t i = 0; i < n; ++i) p[i] -= lr * g[i];
    return;
  }
  T* buf = static_cast<T*>(a.momentum_buffer->data);
  for (int64_t i = 0; i < n; ++i) {
    buf[i] = momentum * buf[i] + g[i];
    p[i] -= lr * buf[i];
  }
}

template <typename T>
void adam_typed(const AdamArgs& a) {
  const int64_t n = numel(*a.param);
  T* p = static_cast<T*>(a.param->data);
  const T* g = static_cast<const T*>(a.grad->data);
  T* m = static_cast<T*>(a.exp_avg->data);
  T* v = static_cast<T*>(a.exp_avg_sq->data);
  const T beta1 = T(a.beta1), beta2 = T(a.beta2), eps = T(a.eps);
  const T step_size = T(a.lr / (1.0 - std::pow(a.beta1, double(a.step))));
  const T correction2_sqrt = T(std::sqrt(1.0 - std::pow(a.beta2, double(a.step))));
  for (int64_t i = 0; i < n; ++i) {
    m[i] = beta1 * m[i] + (T(1) - beta1) * g[i];
    v[i] = beta2 * v[i] + (T(1) - beta2) * g[i] * g[i];
    p[i] -= step_size * m[i] / (std::sqrt(v[i]) / correction2_sqrt + eps);
  }
}

}  // namespace

void axpy(const lltm_tensor& y, double alpha, const lltm_tensor& x, int32_t dtype) {
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_axpy", [&] { axpy_typed<scalar_t>(y, scalar_t(alpha), x); });
}

void sgd_step(const SgdArgs& args, int32_t dtype) {
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_sgd_step", [&] { sgd_typed<scalar_t>(args); });
}

void adam_step(const AdamArgs& args, int32_t dtype) {
  LLTM_DISPATCH_FLOATING_TYPES(dtype, "lltm_adam_step", [&] { adam_typed<scalar_t>(args); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
