// The typed entry points of ABI versions 1 and 2: each builds an lltm_call
// (every descriptor taking the call's dtype argument, float32 or float64)
// and runs it as lltm_run does, reporting under its own name.
#include <string>
#include <utility>

#include "api/device.h"
#include "api/run.h"
#include "lltm.h"
#include "lltm_args.h"
#include "op_slots.h"
#include "ops/hooks.h"

using namespace lltm;

namespace {

// Only the fields lltm_run reads are written: those of the given slots and the op's scalars.
struct Call {
  lltm_call c;
  int32_t dtype;

  Call(int32_t dtype, int32_t kind, int32_t index, uint32_t flags = 0) : dtype(dtype) {
    c.device_kind = c.src_device_kind = kind;
    c.device_index = c.src_device_index = index;
    c.flags = flags;
    c.given = 0;
  }
  Call& operator()(int slot, const lltm_tensor* t) {
    if (t != nullptr) {
      c.tensors[slot] = *t;
      c.tensors[slot].dtype = dtype;
      c.given |= 1u << slot;
    }
    return *this;
  }
  Call& scalar(int k, double v) {
    c.scalars[k] = v;
    return *this;
  }
};

template <typename Build>
int32_t typed(const char* fn, int32_t op, int32_t dtype, Build&& build) noexcept {
  return api::entry(fn, [&] {
    check_dtype(dtype, fn);
    api::run_op(fn, *ops::op_schema(op), build(), true);
  });
}

// lltm_backward and lltm_backward_ex, each reporting under its own name.
int32_t backward(const char* fn, const lltm_tensor* grad_h, const lltm_tensor* grad_cell, const lltm_tensor* new_cell,
                 const lltm_tensor* input_gate, const lltm_tensor* output_gate, const lltm_tensor* candidate_cell,
                 const lltm_tensor* X, const lltm_tensor* gate_weights, const lltm_tensor* weights,
                 const lltm_tensor* d_old_h, const lltm_tensor* d_input, const lltm_tensor* d_weights,
                 const lltm_tensor* d_bias, const lltm_tensor* d_old_cell, uint32_t flags, int32_t dtype,
                 int32_t device_kind, int32_t device_index) {
  namespace s = slots::BACKWARD;
  Call call(dtype, device_kind, device_index, flags);
  return typed(fn, LLTM_OP_BACKWARD, dtype, [&]() -> const lltm_call& {
    call(s::grad_h, grad_h)(s::grad_cell, grad_cell)(s::new_cell, new_cell)(s::input_gate, input_gate)(
        s::output_gate, output_gate)(s::candidate_cell, candidate_cell)(s::X, X)(s::gate_weights, gate_weights)(
        s::weights, weights)(s::d_old_h, d_old_h)(s::d_input, d_input)(s::d_weights, d_weights)(s::d_bias, d_bias)(
        s::d_old_cell, d_old_cell);
    return call.c;
  });
}

// A sequence's reserve as the BYTES slot's descriptor.
lltm_tensor reserve_tensor(const void* reserve, uint64_t reserve_bytes) {
  lltm_tensor t{};
  t.data = const_cast<void*>(reserve);
  t.ndim = 1;
  t.sizes[0] = reserve_bytes > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(reserve_bytes);
  t.strides[0] = 1;
  return t;
}

}  // namespace

extern "C" {

LLTM_API int32_t lltm_forward(const lltm_tensor* input, const lltm_tensor* weights, const lltm_tensor* bias,
                              const lltm_tensor* old_h, const lltm_tensor* old_cell, const lltm_tensor* new_h,
                              const lltm_tensor* new_cell, const lltm_tensor* input_gate,
                              const lltm_tensor* output_gate, const lltm_tensor* candidate_cell,
                              const lltm_tensor* X, const lltm_tensor* gate_weights, int32_t dtype,
                              int32_t device_kind, int32_t device_index) {
  namespace s = slots::FORWARD;
  Call call(dtype, device_kind, device_index);
  return typed("lltm_forward", LLTM_OP_FORWARD, dtype, [&]() -> const lltm_call& {
    call(s::input, input)(s::weights, weights)(s::bias, bias)(s::old_h, old_h)(s::old_cell, old_cell)(s::new_h, new_h)(
        s::new_cell, new_cell)(s::input_gate, input_gate)(s::output_gate, output_gate)(s::candidate_cell,
                                                                                        candidate_cell)(s::X, X)(
        s::gate_weights, gate_weights);
    return call.c;
  });
}

LLTM_API int32_t lltm_backward_ex(const lltm_tensor* grad_h, const lltm_tensor* grad_cell,
                                  const lltm_tensor* new_cell, const lltm_tensor* input_gate,
                                  const lltm_tensor* output_gate, const lltm_tensor* candidate_cell,
                                  const lltm_tensor* X, const lltm_tensor* gate_weights, const lltm_tensor* weights,
                                  const lltm_tensor* d_old_h, const lltm_tensor* d_input,
                                  const lltm_tensor* d_weights, const lltm_tensor* d_bias,
                                  const lltm_tensor* d_old_cell, uint32_t flags, int32_t dtype, int32_t device_kind,
                                  int32_t device_index) {
  return backward("lltm_backward_ex", grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, X,
                  gate_weights, weights, d_old_h, d_input, d_weights, d_bias, d_old_cell, flags, dtype, device_kind,
                  device_index);
}

LLTM_API int32_t lltm_backward(const lltm_tensor* grad_h, const lltm_tensor* grad_cell, const lltm_tensor* new_cell,
                               const lltm_tensor* input_gate, const lltm_tensor* output_gate,
                               const lltm_tensor* candidate_cell, const lltm_tensor* X,
                               const lltm_tensor* gate_weights, const lltm_tensor* weights,
                               const lltm_tensor* d_old_h, const lltm_tensor* d_input,
                               const lltm_tensor* d_weights, const lltm_tensor* d_bias,
                               const lltm_tensor* d_old_cell, int32_t dtype, int32_t device_kind,
                               int32_t device_index) {
  return backward("lltm_backward", grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, X,
                  gate_weights, weights, d_old_h, d_input, d_weights, d_bias, d_old_cell, 0, dtype, device_kind,
                  device_index);
}

LLTM_API int32_t lltm_copy(const lltm_tensor* dst, int32_t dst_kind, int32_t dst_index, const lltm_tensor* src,
                           int32_t src_kind, int32_t src_index, int32_t dtype) {
  namespace s = slots::COPY;
  Call call(dtype, dst_kind, dst_index);
  return typed("lltm_copy", LLTM_OP_COPY, dtype, [&]() -> const lltm_call& {
    call(s::dst, dst)(s::src, src);
    call.c.src_device_kind = src_kind;
    call.c.src_device_index = src_index;
    return call.c;
  });
}

LLTM_API int32_t lltm_fill(const lltm_tensor* dst, double value, int32_t dtype, int32_t device_kind,
                           int32_t device_index) {
  Call call(dtype, device_kind, device_index);
  return typed("lltm_fill", LLTM_OP_FILL, dtype, [&]() -> const lltm_call& {
    return call(slots::FILL::dst, dst).scalar(scalars::FILL::value, value).c;
  });
}

LLTM_API int32_t lltm_axpy(const lltm_tensor* y, double alpha, const lltm_tensor* x, int32_t dtype,
                           int32_t device_kind, int32_t device_index) {
  namespace s = slots::AXPY;
  Call call(dtype, device_kind, device_index);
  return typed("lltm_axpy", LLTM_OP_AXPY, dtype, [&]() -> const lltm_call& {
    return call(s::y, y)(s::x, x).scalar(scalars::AXPY::alpha, alpha).c;
  });
}

LLTM_API int32_t lltm_sgd_step(const lltm_tensor* param, const lltm_tensor* grad, const lltm_tensor* momentum_buffer,
                               double lr, double momentum, int32_t dtype, int32_t device_kind, int32_t device_index) {
  namespace s = slots::SGD_STEP;
  namespace k = scalars::SGD_STEP;
  Call call(dtype, device_kind, device_index);
  return typed("lltm_sgd_step", LLTM_OP_SGD_STEP, dtype, [&]() -> const lltm_call& {
    // Without momentum the buffer is not read, whatever it describes.
    call(s::param, param)(s::grad, grad)(s::momentum_buffer, momentum == 0.0 ? nullptr : momentum_buffer);
    return call.scalar(k::lr, lr).scalar(k::momentum, momentum).c;
  });
}

LLTM_API int32_t lltm_adam_step(const lltm_tensor* param, const lltm_tensor* grad, const lltm_tensor* exp_avg,
                                const lltm_tensor* exp_avg_sq, double lr, double beta1, double beta2, double eps,
                                int64_t step, int32_t dtype, int32_t device_kind, int32_t device_index) {
  namespace s = slots::ADAM_STEP;
  namespace k = scalars::ADAM_STEP;
  Call call(dtype, device_kind, device_index);
  return typed("lltm_adam_step", LLTM_OP_ADAM_STEP, dtype, [&]() -> const lltm_call& {
    call(s::param, param)(s::grad, grad)(s::exp_avg, exp_avg)(s::exp_avg_sq, exp_avg_sq);
    return call.scalar(k::lr, lr).scalar(k::beta1, beta1).scalar(k::beta2, beta2).scalar(k::eps, eps).scalar(
        k::step, double(step)).c;
  });
}

LLTM_API int32_t lltm_sequence_reserve_bytes(int64_t steps, int64_t batch, int64_t input_features,
                                             int64_t state_size, int32_t dtype, int32_t device_kind,
                                             int32_t device_index, uint64_t* bytes) {
  if (bytes != nullptr) *bytes = 0;
  const char* fn = "lltm_sequence_reserve_bytes";
  return api::entry(fn, [&] {
    if (bytes == nullptr) fail(LLTM_ERR_NULL_POINTER, std::string(fn) + ": 'bytes' is a null pointer");
    check_dtype(dtype, fn);
    const std::pair<int64_t, const char*> sizes[] = {
        {steps, "steps"}, {batch, "batch"}, {input_features, "input_features"}, {state_size, "state_size"}};
    for (auto& [value, name] : sizes)
      if (value < 1)
        fail(LLTM_ERR_INVALID_ARGUMENT,
             std::string(fn) + ": '" + name + "' must be at least 1, got " + std::to_string(value));
    api::device_for(device_kind, device_index, fn);
    OpCall call{};
    call.op = LLTM_OP_SEQUENCE_FORWARD;
    call.compute = dtype;
    call.sizes['T' - 'A'] = steps;
    call.sizes['B' - 'A'] = batch;
    call.sizes['F' - 'A'] = input_features;
    call.sizes['S' - 'A'] = state_size;
    *bytes = ops::op_hooks(LLTM_OP_SEQUENCE_FORWARD).buffer_bytes(call, fn);
  });
}

LLTM_API int32_t lltm_sequence_forward(const lltm_tensor* inputs, const lltm_tensor* weights, const lltm_tensor* bias,
                                       const lltm_tensor* h0, const lltm_tensor* c0, const lltm_tensor* outputs,
                                       const lltm_tensor* last_h, const lltm_tensor* last_cell, void* reserve,
                                       uint64_t reserve_bytes, uint32_t flags, int32_t dtype, int32_t device_kind,
                                       int32_t device_index) {
  namespace s = slots::SEQUENCE_FORWARD;
  Call call(dtype, device_kind, device_index, flags);
  return typed("lltm_sequence_forward", LLTM_OP_SEQUENCE_FORWARD, dtype, [&]() -> const lltm_call& {
    call(s::inputs, inputs)(s::weights, weights)(s::bias, bias)(s::h0, h0)(s::c0, c0)(s::outputs, outputs)(
        s::last_h, last_h)(s::last_cell, last_cell);
    // Inference keeps nothing: the reserve is then ignored.
    if ((flags & LLTM_SEQUENCE_TRAINING) != 0) {
      call.c.tensors[s::reserve] = reserve_tensor(reserve, reserve_bytes);
      call.c.tensors[s::reserve].dtype = LLTM_UINT8;
      call.c.given |= 1u << s::reserve;
    }
    return call.c;
  });
}

LLTM_API int32_t lltm_sequence_backward(const lltm_tensor* grad_outputs, const lltm_tensor* grad_last_h,
                                        const lltm_tensor* grad_last_cell, const void* reserve,
                                        uint64_t reserve_bytes, const lltm_tensor* inputs,
                                        const lltm_tensor* weights, const lltm_tensor* h0,
                                        const lltm_tensor* d_inputs, const lltm_tensor* d_weights,
                                        const lltm_tensor* d_bias, const lltm_tensor* d_h0,
                                        const lltm_tensor* d_c0, uint32_t flags, int32_t dtype,
                                        int32_t device_kind, int32_t device_index) {
  namespace s = slots::SEQUENCE_BACKWARD;
  Call call(dtype, device_kind, device_index, flags);
  return typed("lltm_sequence_backward", LLTM_OP_SEQUENCE_BACKWARD, dtype, [&]() -> const lltm_call& {
    call(s::grad_outputs, grad_outputs)(s::grad_last_h, grad_last_h)(s::grad_last_cell, grad_last_cell)(
        s::inputs, inputs)(s::weights, weights)(s::h0, h0)(s::d_inputs, d_inputs)(s::d_weights, d_weights)(
        s::d_bias, d_bias)(s::d_h0, d_h0)(s::d_c0, d_c0);
    call.c.tensors[s::reserve] = reserve_tensor(reserve, reserve_bytes);
    call.c.tensors[s::reserve].dtype = LLTM_UINT8;
    call.c.given |= 1u << s::reserve;
    return call.c;
  });
}

}  // extern "C"
