// The kernels' argument structs (lltm_args.h) from a validated OpCall, for
// the ops whose kernels predate the op table: one place for every backend.
#pragma once

#include "lltm_args.h"
#include "op_call.h"
#include "op_slots.h"

namespace lltm {

inline ForwardArgs forward_args(const OpCall& c) {
  namespace s = slots::FORWARD;
  const auto t = [&](int k) { return c.tensors[k]; };
  return {t(s::input), t(s::weights), t(s::bias), t(s::old_h), t(s::old_cell), t(s::new_h), t(s::new_cell),
          t(s::input_gate), t(s::output_gate), t(s::candidate_cell), t(s::X), t(s::gate_weights),
          {c.size('B'), c.size('F'), c.size('S')}};
}

inline BackwardArgs backward_args(const OpCall& c) {
  namespace s = slots::BACKWARD;
  const auto t = [&](int k) { return c.tensors[k]; };
  return {t(s::grad_h), t(s::grad_cell), t(s::new_cell), t(s::input_gate), t(s::output_gate),
          t(s::candidate_cell), t(s::X), t(s::gate_weights), t(s::weights), t(s::d_old_h), t(s::d_input),
          t(s::d_weights), t(s::d_bias), t(s::d_old_cell), t(s::grad_output), {c.size('B'), c.size('F'), c.size('S')},
          (c.flags & LLTM_ACCUMULATE_PARAM_GRADS) != 0};
}

inline SequenceForwardArgs sequence_forward_args(const OpCall& c) {
  namespace s = slots::SEQUENCE_FORWARD;
  const auto t = [&](int k) { return c.tensors[k]; };
  const bool training = (c.flags & LLTM_SEQUENCE_TRAINING) != 0;
  return {t(s::inputs), t(s::weights), t(s::bias), t(s::h0), t(s::c0), t(s::outputs), t(s::last_h), t(s::last_cell),
          training ? t(s::reserve)->data : nullptr, t(s::lengths), {c.size('T'), c.size('B'), c.size('F'), c.size('S')}};
}

inline SequenceBackwardArgs sequence_backward_args(const OpCall& c) {
  namespace s = slots::SEQUENCE_BACKWARD;
  const auto t = [&](int k) { return c.tensors[k]; };
  return {t(s::grad_outputs), t(s::grad_last_h), t(s::grad_last_cell), t(s::reserve)->data, t(s::inputs),
          t(s::weights), t(s::h0), t(s::d_inputs), t(s::d_weights), t(s::d_bias), t(s::d_h0), t(s::d_c0),
          t(s::lengths), {c.size('T'), c.size('B'), c.size('F'), c.size('S')}, (c.flags & LLTM_ACCUMULATE_PARAM_GRADS) != 0};
}

inline SgdArgs sgd_args(const OpCall& c) {
  namespace s = slots::SGD_STEP;
  namespace k = scalars::SGD_STEP;
  return {c.tensors[s::param], c.tensors[s::grad], c.tensors[s::momentum_buffer], c.scalars[k::lr],
          c.scalars[k::momentum]};
}

inline AdamArgs adam_args(const OpCall& c) {
  namespace s = slots::ADAM_STEP;
  namespace k = scalars::ADAM_STEP;
  return {c.tensors[s::param], c.tensors[s::grad], c.tensors[s::exp_avg], c.tensors[s::exp_avg_sq], c.scalars[k::lr],
          c.scalars[k::beta1], c.scalars[k::beta2], c.scalars[k::eps], int64_t(c.scalars[k::step])};
}

}  // namespace lltm
