// The step backward's optional grad_output, a second gradient of new_h (a
// one-step sequence's output is its h), joins grad_h before the CPU kernels
// run: their sum as one contiguous [B, S] tensor, so that the kernels read
// one gradient of h as before. A pass over B·S elements, beside products of
// B·3S·(S+F) multiply-adds. In the instruction-set variant's namespace, as
// the kernels that include it (kernels.h), so no variant's code mixes in another's.
#pragma once

#include <cstdint>
#include <vector>

#include "../lltm_args.h"
#include "elementwise_rows.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

// Where grad_output is given: grad_h + grad_output into `storage` (elements
// of type Storage, summed as load() gives them and rounded by store()), `sum`
// describing it, and args reading it as grad_h with grad_output gone.
template <typename Storage, typename Load, typename Store>
void join_h_gradients(BackwardArgs& args, std::vector<Storage>& storage, lltm_tensor& sum, Load load, Store store) {
  if (args.grad_output == nullptr) return;
  const int64_t B = args.n.batch, S = args.n.state;
  storage.resize(size_t(B) * size_t(S));
  sum = *args.grad_h;
  sum.data = storage.data();
  sum.strides[0] = S;
  sum.strides[1] = 1;
  each_of_three<Storage>(sum, *args.grad_h, *args.grad_output,
                         [&](Storage& o, Storage h, Storage g) { o = store(load(h) + load(g)); });
  args.grad_h = &sum;
  args.grad_output = nullptr;
}

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
