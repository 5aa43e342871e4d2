// TEMPORARY: the sequence arguments of issue 11 until csrc/lltm_args.h has them.
#pragma once
#include <cstdint>
#include "lltm_args.h"
namespace lltm {
struct SequenceSizes { int64_t steps, batch, features, state; };
struct SequenceForwardArgs {
  const lltm_tensor *inputs, *weights, *bias, *h0, *c0;
  const lltm_tensor *outputs, *last_h, *last_cell;
  void* reserve;
  SequenceSizes n;
};
struct SequenceBackwardArgs {
  const lltm_tensor *grad_outputs, *grad_last_h, *grad_last_cell;
  const void* reserve;
  const lltm_tensor *inputs, *weights, *h0;
  const lltm_tensor *d_inputs, *d_weights, *d_bias, *d_h0, *d_c0;
  SequenceSizes n;
  bool accumulate;
};
}
