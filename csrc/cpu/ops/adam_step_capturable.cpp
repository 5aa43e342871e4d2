// The adam_step_capturable op on the CPU: lr and the step count read from hyper, then AdamW's update.
#include <cmath>

#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

void run_ADAM_STEP_CAPTURABLE(const OpCall& call) {
  namespace s = slots::ADAM_STEP_CAPTURABLE;
  namespace k = scalars::ADAM_STEP_CAPTURABLE;
  const int64_t n = numel(*call.tensors[s::param]);
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_adam_step_capturable", [&] {
    using T = scalar_t;
    T* p = static_cast<T*>(call.tensors[s::param]->data);
    const T* g = static_cast<const T*>(call.tensors[s::grad]->data);
    T* m = static_cast<T*>(call.tensors[s::exp_avg]->data);
    T* v = static_cast<T*>(call.tensors[s::exp_avg_sq]->data);
    const T* hyper = static_cast<const T*>(call.tensors[s::hyper]->data);
    const double lr = double(hyper[0]), step = double(hyper[1]) + 1.0;
    const double beta1 = call.scalars[k::beta1], beta2 = call.scalars[k::beta2];
    const T decay = T(-lr * call.scalars[k::weight_decay]);  // added as lltm_axpy adds: p += decay * p
    const T b1 = T(beta1), b2 = T(beta2), eps = T(call.scalars[k::eps]);
    const T step_size = T(lr / (1.0 - std::pow(beta1, step)));
    const T correction2_sqrt = T(std::sqrt(1.0 - std::pow(beta2, step)));
    for (int64_t i = 0; i < n; ++i) {
      p[i] += decay * p[i];
      m[i] = b1 * m[i] + (T(1) - b1) * g[i];
      v[i] = b2 * v[i] + (T(1) - b2) * g[i] * g[i];
      p[i] -= step_size * m[i] / (std::sqrt(v[i]) / correction2_sqrt + eps);
    }
  });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
