// The cross_entropy op on the CPU: every target checked first, then each
// row's loss log(sum exp(logits - max)) - (logits[target] - max), the rows
// split between threads, then summed in double, in row order, for the mean
// and the sum.
#include <cmath>
#include <string>
#include <vector>

#include "../../dispatch.h"
#include "../../op_slots.h"
#include "../../ops/refusals.h"
#include "../kernels.h"
#include "../thread_pool.h"
#include "row_exps.h"

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
  // Each row's loss (0 for an ignored one): into `losses` itself where it is kept.
  std::vector<T> kept(reduction == 0 ? 0 : size_t(N));
  T* const loss_of = reduction == 0 ? static_cast<T*>(losses->data) : kept.data();
  const int64_t loss_stride = reduction == 0 ? losses->strides[0] : 1;
  // An exponential costs about as much as 16 multiply-adds.
  parallel(parts_for(double(N) * double(V) * 16), [&](int part, int parts) {
    int64_t n0, n1;
    split_range(N, 1, part, parts, n0, n1);
    for (int64_t n = n0; n < n1; ++n) {
      const int64_t target = t[n * targets.strides[0]];
      T loss = 0;
      if (target != ignore) {
        const T* row = xd + n * x.strides[0];
        const RowExps<T> e = row_exps(row, x.strides[1], V);
        loss = std::log(e.sum) - (row[target * x.strides[1]] - e.max);
      }
      loss_of[n * loss_stride] = loss;
    }
  });
  double sum = 0;
  int64_t count = 0;
  for (int64_t n = 0; n < N; ++n) {
    sum += double(loss_of[n * loss_stride]);
    count += t[n * targets.strides[0]] != ignore;
  }
  if (reduction != 0) *static_cast<T*>(total->data) = T(reduction == 1 ? sum / double(count) : sum);
}

}  // namespace

void run_CROSS_ENTROPY(const OpCall& call) {
  LLTM_DISPATCH_FLOATING_TYPES(call.compute, "lltm_cross_entropy", [&] { cross_entropy<scalar_t>(call); });
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
