// The cross_entropy op on the CPU: every target checked first, then each
// row's loss log(sum exp(logits - max)) - (logits[target] - max), summed in
// double for the mean and the sum.
#include <cmath>
#include <string>

#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../../ops/refusals.h"
#include "../kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

template <typename T>
void cross_entropy(const OpCall& call) {
  namespace s = slots::CROSS_ENTROPY;
  namespace k = scalars::CROSS_ENTROPY;
  const lltm_tensor &x = *call.tensors[s::logits], &targets = *call.tensors[s::targets];
  const lltm_tensor *losses = call.tensors[s::losses], *total = call.tensors[s::total];
  const int64_t N = call.size('N'), V = call.size('V');
  const int64_t reduction = int64_t(call.scalars[k::reduction]), ignore = int64_t(call.scalars[k::ignore_index]);
  const int32_t* t = static_cast<const int32_t*>(targets.data);
  ops::check_indices("lltm_cross_entropy", "targets", targets, N, {V, true, ignore});
  const T* xd = static_cast<const T*>(x.data);
  double sum = 0;
  int64_t count = 0;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t target = t[n * targets.strides[0]];
    T loss = 0;
    if (target != ignore) {
      const T* row = xd + n * x.strides[0];
      T max = row[0];
      for (int64_t v = 1; v < V; ++v) max = std::fmax(max, row[v * x.strides[1]]);
      T exps = 0;
      for (int64_t v = 0; v < V; ++v) exps += std::exp(row[v * x.strides[1]] - max);
      loss = std::log(exps) - (row[target * x.strides[1]] - max);
      ++count;
    }
    sum += double(loss);
    if (reduction == 0) static_cast<T*>(losses->data)[n * losses->strides[0]] = loss;
  }
  if (reduction != 0) *static_cast<T*>(total->data) = T(reduction == 1 ? sum / double(count) : sum);
}

}  // namespace

void run_CROSS_ENTROPY(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_cross_entropy", [&] { cross_entropy<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
