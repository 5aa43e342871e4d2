#include "lltm_args.h"

#include <string>
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iterator>

#include "overlap.h"
#include "status.h"

namespace lltm {

namespace {

std::string shape_string(const lltm_tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.ndim; ++d) s += (d ? ", " : "") + std::to_string(t.sizes[d]);
  return s + "]";
}

struct Expected {
  Expected(const lltm_tensor* t, const char* name, std::initializer_list<int64_t> sizes, const char* symbols)
      : t(t), name(name), rank(int64_t(sizes.size())), symbols(symbols) {
    std::copy(sizes.begin(), sizes.end(), this->sizes);
  }
  const lltm_tensor* t;
  const char* name;
  int64_t rank;
  int64_t sizes[3];
  const char* symbols;  // e.g. "(B, S)"
};

void check_shapes(const char* fn, std::initializer_list<Expected> list) {
  for (const Expected& e : list) {
    bool ok = e.t->ndim == e.rank;
    for (int64_t d = 0; ok && d < e.rank; ++d) ok = e.t->sizes[d] == e.sizes[d];
    if (ok) continue;
    std::string want = "[";
    for (int64_t d = 0; d < e.rank; ++d) want += (d ? ", " : "") + std::to_string(e.sizes[d]);
    fail(LLTM_ERR_SHAPE_MISMATCH, std::string(fn) + ": '" + e.name + "' must have shape " + want + "] " +
                                      e.symbols + ", got " + shape_string(*e.t));
  }
}

void check_rank(const char* fn, const lltm_tensor* t, const char* name, int64_t ndim) {
  if (t->ndim != ndim)
    fail(LLTM_ERR_SHAPE_MISMATCH, std::string(fn) + ": '" + name + "' must have " + std::to_string(ndim) +
                                      " dimension" + (ndim == 1 ? "" : "s") + ", got " + shape_string(*t));
}

}  // namespace

int64_t check_tensor(const lltm_tensor* t, const char* fn, const char* name, bool output) {
  // Messages are built only on failure: this runs on every call.
  auto what = [&] { return std::string(fn) + ": '" + name + "'"; };
  if (t == nullptr) fail(LLTM_ERR_NULL_POINTER, what() + " is a null pointer");
  if (t->data == nullptr) fail(LLTM_ERR_NULL_POINTER, what() + " has a null data pointer");
  if (t->ndim < 1 || t->ndim > LLTM_MAX_DIMS)
    fail(LLTM_ERR_INVALID_SHAPE, what() + " has " + std::to_string(t->ndim) +
                                     " dimensions; expected 1 to " + std::to_string(LLTM_MAX_DIMS));
  // The offset of the last element, in checked arithmetic: sizes and strides
  // up to 2^48 make products up to 2^96.
  int64_t last = 0;
  for (int64_t d = 0; d < t->ndim; ++d) {
    const int64_t size = t->sizes[d], stride = t->strides[d];
    if (size <= 0 || size > kMaxExtent)
      fail(LLTM_ERR_INVALID_SHAPE, what() + " has size " + std::to_string(size) + " in dimension " +
                                       std::to_string(d) + "; expected a positive size up to 2^48");
    if (stride < 0 || stride > kMaxExtent)
      fail(LLTM_ERR_INVALID_SHAPE, what() + " has stride " + std::to_string(stride) + " in dimension " +
                                       std::to_string(d) + "; expected a non-negative stride up to 2^48");
    if (output && stride == 0 && size > 1)
      fail(LLTM_ERR_INVALID_SHAPE, what() + " is an output with stride 0 in dimension " +
                                       std::to_string(d) + "; outputs need distinct elements");
    int64_t step;
    if (__builtin_mul_overflow(size - 1, stride, &step) || __builtin_add_overflow(last, step, &last) ||
        last >= kMaxExtent)
      fail(LLTM_ERR_INVALID_SHAPE, what() + " spans more than 2^48 elements (sizes " + shape_string(*t) +
                                       " times their strides)");
  }
  // Its bytes (at most 2^51 at 8 bytes an element) must not wrap the address space.
  const uintptr_t begin = reinterpret_cast<uintptr_t>(t->data);
  if (begin > UINTPTR_MAX - uintptr_t(last + 1) * 8)
    fail(LLTM_ERR_INVALID_SHAPE, what() + " spans past the end of the address space");
  return last;
}

void check_same_sizes(const char* fn, const lltm_tensor* a, const char* a_name, const lltm_tensor* b,
                      const char* b_name) {
  bool same = a->ndim == b->ndim;
  for (int64_t d = 0; same && d < a->ndim; ++d) same = a->sizes[d] == b->sizes[d];
  if (!same)
    fail(LLTM_ERR_SHAPE_MISMATCH, std::string(fn) + ": '" + a_name + "' has shape " + shape_string(*a) + " but '" +
                                      b_name + "' has shape " + shape_string(*b) + "; expected equal shapes");
}

void check_bytes(uint64_t bytes, const char* fn) {
  if (bytes == 0 || bytes > kMaxBytes)
    fail(LLTM_ERR_INVALID_SHAPE,
         std::string(fn) + ": bytes must be in [1, 2^63], got " + std::to_string(bytes));
}

void check_dtype(int32_t dtype, const char* fn) {
  if (dtype != LLTM_FLOAT32 && dtype != LLTM_FLOAT64)
    fail(LLTM_ERR_INVALID_DTYPE, std::string(fn) + ": dtype " + std::to_string(dtype) +
                                     " is not float32 (0) or float64 (1)");
}

int64_t element_size(int32_t dtype) { return dtype == LLTM_FLOAT64 ? 8 : 4; }

int64_t numel(const lltm_tensor& t) {
  int64_t n = 1;
  for (int64_t d = 0; d < t.ndim; ++d) n *= t.sizes[d];
  return n;
}

bool is_contiguous(const lltm_tensor& t) {
  int64_t expected = 1;
  for (int64_t d = t.ndim - 1; d >= 0; --d) {
    if (t.sizes[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

lltm_tensor contiguous_like(const lltm_tensor& like, void* data) {
  lltm_tensor t = like;
  t.data = data;
  int64_t stride = 1;
  for (int64_t d = like.ndim - 1; d >= 0; --d) {
    t.strides[d] = stride;
    stride *= like.sizes[d];
  }
  return t;
}

namespace {

// Checks a tensor argument (check_tensor) and returns the bytes it spans.
Span checked_span(const char* fn, const Named& arg, bool output, int64_t bytes_per_element) {
  return span_of(*arg.t, check_tensor(arg.t, fn, arg.name, output), bytes_per_element);
}

// Returns the tensor's span.
Span check_contiguous_like(const char* fn, const lltm_tensor* t, const char* name, const lltm_tensor* param,
                           bool output, int32_t dtype) {
  const Span span = checked_span(fn, {t, name}, output, element_size(dtype));
  if (t != param) check_same_sizes(fn, t, name, param, "param");
  if (!is_contiguous(*t))
    fail(LLTM_ERR_INVALID_SHAPE, std::string(fn) + ": '" + name + "' must be contiguous");
  return span;
}

void check_range(const char* fn, const char* name, double v, double lo, double hi, bool hi_open) {
  const bool ok = std::isfinite(v) && v >= lo && (hi_open ? v < hi : v <= hi);
  if (!ok)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": '" + name + "' must be in [" + std::to_string(lo) + ", " +
                                     std::to_string(hi) + (hi_open ? ")" : "]") + ", got " + std::to_string(v));
}

}  // namespace

void validate(const SgdArgs& a, const char* fn, int32_t dtype) {
  const Span param_span = check_contiguous_like(fn, a.param, "param", a.param, true, dtype);
  const Named grad[] = {{a.grad, "grad"}};
  const Span grad_span[] = {check_contiguous_like(fn, a.grad, "grad", a.param, false, dtype)};
  check_range(fn, "lr", a.lr, 0.0, 1e30, false);
  check_range(fn, "momentum", a.momentum, 0.0, 1.0, true);
  if (a.momentum == 0.0) {
    const Named updated[] = {{a.param, "param"}};
    check_no_overlap(fn, updated, {param_span}, grad, grad_span);
    return;
  }
  const Named updated[] = {{a.param, "param"}, {a.momentum_buffer, "momentum_buffer"}};
  const Span spans[] = {param_span,
                        check_contiguous_like(fn, a.momentum_buffer, "momentum_buffer", a.param, true, dtype)};
  check_no_overlap(fn, updated, spans, grad, grad_span);
}

void validate(const AdamArgs& a, const char* fn, int32_t dtype) {
  const Named updated[] = {{a.param, "param"}, {a.exp_avg, "exp_avg"}, {a.exp_avg_sq, "exp_avg_sq"}};
  const Named grad[] = {{a.grad, "grad"}};
  const Span spans[] = {check_contiguous_like(fn, a.param, "param", a.param, true, dtype),
                        check_contiguous_like(fn, a.exp_avg, "exp_avg", a.param, true, dtype),
                        check_contiguous_like(fn, a.exp_avg_sq, "exp_avg_sq", a.param, true, dtype)};
  const Span grad_span[] = {check_contiguous_like(fn, a.grad, "grad", a.param, false, dtype)};
  check_range(fn, "lr", a.lr, 0.0, 1e30, false);
  check_range(fn, "beta1", a.beta1, 0.0, 1.0, true);
  check_range(fn, "beta2", a.beta2, 0.0, 1.0, true);
  check_range(fn, "eps", a.eps, 0.0, 1e30, false);
  if (a.step < 1)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": 'step' must be at least 1, got " + std::to_string(a.step));
  check_no_overlap(fn, updated, spans, grad, grad_span);
}

Sizes validate(const ForwardArgs& a, const char* fn, int32_t dtype) {
  const Named inputs[] = {
      {a.input, "input"}, {a.weights, "weights"}, {a.bias, "bias"}, {a.old_h, "old_h"}, {a.old_cell, "old_cell"}};
  const Named outputs[] = {
      {a.new_h, "new_h"}, {a.new_cell, "new_cell"}, {a.input_gate, "input_gate"},
      {a.output_gate, "output_gate"}, {a.candidate_cell, "candidate_cell"}, {a.X, "X"},
      {a.gate_weights, "gate_weights"}};
  const int64_t size = element_size(dtype);
  Span in[std::size(inputs)], out[std::size(outputs)];
  for (size_t i = 0; i < std::size(inputs); ++i)
    in[i] = checked_span(fn, inputs[i], false, size);
  for (size_t o = 0; o < std::size(outputs); ++o)
    out[o] = checked_span(fn, outputs[o], true, size);
  check_rank(fn, a.input, "input", 2);
  check_rank(fn, a.old_h, "old_h", 2);
  const int64_t B = a.input->sizes[0], F = a.input->sizes[1], S = a.old_h->sizes[1];
  check_shapes(fn, {{a.old_h, "old_h", {B, S}, "(B, S)"},
                    {a.old_cell, "old_cell", {B, S}, "(B, S)"},
                    {a.weights, "weights", {3 * S, S + F}, "(3S, S+F)"},
                    {a.bias, "bias", {3 * S}, "(3S)"},
                    {a.new_h, "new_h", {B, S}, "(B, S)"},
                    {a.new_cell, "new_cell", {B, S}, "(B, S)"},
                    {a.input_gate, "input_gate", {B, S}, "(B, S)"},
                    {a.output_gate, "output_gate", {B, S}, "(B, S)"},
                    {a.candidate_cell, "candidate_cell", {B, S}, "(B, S)"},
                    {a.X, "X", {B, S + F}, "(B, S+F)"},
                    {a.gate_weights, "gate_weights", {B, 3 * S}, "(B, 3S)"}});
  check_no_overlap(fn, outputs, out, inputs, in);
  return {B, F, S};
}

Sizes validate(const BackwardArgs& a, const char* fn, int32_t dtype) {
  const Named inputs[] = {
      {a.grad_h, "grad_h"}, {a.grad_cell, "grad_cell"}, {a.new_cell, "new_cell"},
      {a.input_gate, "input_gate"}, {a.output_gate, "output_gate"}, {a.candidate_cell, "candidate_cell"},
      {a.X, "X"}, {a.gate_weights, "gate_weights"}, {a.weights, "weights"}};
  const Named outputs[] = {
      {a.d_old_h, "d_old_h"}, {a.d_input, "d_input"}, {a.d_weights, "d_weights"},
      {a.d_bias, "d_bias"}, {a.d_old_cell, "d_old_cell"}};
  const int64_t size = element_size(dtype);
  Span in[std::size(inputs)], out[std::size(outputs)];
  for (size_t i = 0; i < std::size(inputs); ++i)
    in[i] = checked_span(fn, inputs[i], false, size);
  for (size_t o = 0; o < std::size(outputs); ++o)
    out[o] = checked_span(fn, outputs[o], true, size);
  check_rank(fn, a.grad_h, "grad_h", 2);
  check_rank(fn, a.X, "X", 2);
  const int64_t B = a.grad_h->sizes[0], S = a.grad_h->sizes[1], F = a.X->sizes[1] - S;
  if (F < 1)
    fail(LLTM_ERR_SHAPE_MISMATCH, std::string(fn) + ": 'X' must have more than S = " + std::to_string(S) +
                                      " columns (S+F), got " + shape_string(*a.X));
  check_shapes(fn, {{a.grad_cell, "grad_cell", {B, S}, "(B, S)"},
                    {a.new_cell, "new_cell", {B, S}, "(B, S)"},
                    {a.input_gate, "input_gate", {B, S}, "(B, S)"},
                    {a.output_gate, "output_gate", {B, S}, "(B, S)"},
                    {a.candidate_cell, "candidate_cell", {B, S}, "(B, S)"},
                    {a.X, "X", {B, S + F}, "(B, S+F)"},
                    {a.gate_weights, "gate_weights", {B, 3 * S}, "(B, 3S)"},
                    {a.weights, "weights", {3 * S, S + F}, "(3S, S+F)"},
                    {a.d_old_h, "d_old_h", {B, S}, "(B, S)"},
                    {a.d_input, "d_input", {B, F}, "(B, F)"},
                    {a.d_weights, "d_weights", {3 * S, S + F}, "(3S, S+F)"},
                    {a.d_bias, "d_bias", {3 * S}, "(3S)"},
                    {a.d_old_cell, "d_old_cell", {B, S}, "(B, S)"}});
  check_no_overlap(fn, outputs, out, inputs, in);
  return {B, F, S};
}

uint64_t sequence_reserve_bytes(const SequenceSizes& n, int32_t dtype, const char* fn) {
  // T*B*5*S elements (what they hold is the backend's own choice).
  int64_t bytes = element_size(dtype) * 5;
  for (const int64_t factor : {n.steps, n.batch, n.state})
    if (__builtin_mul_overflow(bytes, factor, &bytes))
      fail(LLTM_ERR_INVALID_ARGUMENT,
           std::string(fn) + ": the reserve of T = " + std::to_string(n.steps) + ", B = " + std::to_string(n.batch) +
               ", S = " + std::to_string(n.state) + " (T*B*5*S elements) does not fit in 63 bits");
  return uint64_t(bytes);
}

namespace {

// Checks the reserve's pointer and size; returns the bytes of it a call uses.
uint64_t check_reserve(const char* fn, const void* reserve, uint64_t reserve_bytes, const SequenceSizes& n,
                       int32_t dtype) {
  const uint64_t need = sequence_reserve_bytes(n, dtype, fn);
  if (reserve == nullptr)
    fail(LLTM_ERR_NULL_POINTER, std::string(fn) + ": 'reserve' is a null pointer; training needs " +
                                    std::to_string(need) + " bytes (lltm_sequence_reserve_bytes)");
  if (reserve_bytes < need)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": 'reserve_bytes' is " + std::to_string(reserve_bytes) +
                                        " but T = " + std::to_string(n.steps) + ", B = " + std::to_string(n.batch) +
                                        ", S = " + std::to_string(n.state) + " needs " + std::to_string(need) +
                                        " (lltm_sequence_reserve_bytes)");
  if (reinterpret_cast<uintptr_t>(reserve) > UINTPTR_MAX - need)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": 'reserve' spans past the end of the address space");
  return need;
}

// The reserve as a 1-D descriptor, for the overlap checks.
lltm_tensor reserve_tensor(const void* reserve, uint64_t bytes, int32_t dtype) {
  lltm_tensor t{};
  t.data = const_cast<void*>(reserve);
  t.ndim = 1;
  t.sizes[0] = int64_t(bytes) / element_size(dtype);
  t.strides[0] = 1;
  return t;
}

// Inputs may be broadcast views (stride 0), so their sizes alone do not
// bound the engines' buffers: the reserve's size and the weights' element
// count must fit, which bounds every product of sizes a backend forms.
void check_engine_sizes(const char* fn, const SequenceSizes& n, int32_t dtype) {
  sequence_reserve_bytes(n, dtype, fn);
  int64_t weights = 3 * element_size(dtype);
  if (__builtin_mul_overflow(weights, n.state, &weights) || __builtin_mul_overflow(weights, n.state + n.features, &weights))
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": weights of S = " + std::to_string(n.state) + ", F = " +
                                        std::to_string(n.features) + " (3S*(S+F) elements) do not fit in 63 bits");
}

}  // namespace

SequenceSizes validate(const SequenceForwardArgs& a, uint64_t reserve_bytes, bool training, int32_t dtype) {
  const char* fn = "lltm_sequence_forward";
  const Named inputs[] = {{a.inputs, "inputs"}, {a.weights, "weights"}, {a.bias, "bias"}, {a.h0, "h0"}, {a.c0, "c0"}};
  // A training forward writes the reserve too: it is checked as an output, after the tensors.
  lltm_tensor reserve{};
  const Named outputs[] = {{a.outputs, "outputs"}, {a.last_h, "last_h"}, {a.last_cell, "last_cell"},
                           {&reserve, "reserve"}};
  const int64_t size = element_size(dtype);
  Span in[std::size(inputs)], out[std::size(outputs)];
  for (size_t i = 0; i < std::size(inputs); ++i)
    in[i] = checked_span(fn, inputs[i], false, size);
  for (size_t o = 0; o < 3; ++o)
    out[o] = checked_span(fn, outputs[o], true, size);
  check_rank(fn, a.inputs, "inputs", 3);
  check_rank(fn, a.h0, "h0", 2);
  const int64_t T = a.inputs->sizes[0], B = a.inputs->sizes[1], F = a.inputs->sizes[2], S = a.h0->sizes[1];
  check_shapes(fn, {{a.h0, "h0", {B, S}, "(B, S)"},
                    {a.c0, "c0", {B, S}, "(B, S)"},
                    {a.weights, "weights", {3 * S, S + F}, "(3S, S+F)"},
                    {a.bias, "bias", {3 * S}, "(3S)"},
                    {a.outputs, "outputs", {T, B, S}, "(T, B, S)"},
                    {a.last_h, "last_h", {B, S}, "(B, S)"},
                    {a.last_cell, "last_cell", {B, S}, "(B, S)"}});
  const SequenceSizes n{T, B, F, S};
  check_engine_sizes(fn, n, dtype);
  if (!training) {
    const Named tensors[] = {outputs[0], outputs[1], outputs[2]};
    const Span spans[] = {out[0], out[1], out[2]};
    check_no_overlap(fn, tensors, spans, inputs, in);
    return n;
  }
  reserve = reserve_tensor(a.reserve, check_reserve(fn, a.reserve, reserve_bytes, n, dtype), dtype);
  out[3] = span_of(reserve, reserve.sizes[0] - 1, size);
  check_no_overlap(fn, outputs, out, inputs, in);
  return n;
}

SequenceSizes validate(const SequenceBackwardArgs& a, uint64_t reserve_bytes, int32_t dtype) {
  const char* fn = "lltm_sequence_backward";
  lltm_tensor reserve{};
  // The optional gradients last: an absent one takes the reserve's span, so
  // that it adds no overlap of its own.
  const Named inputs[] = {{a.inputs, "inputs"}, {a.weights, "weights"}, {a.h0, "h0"}, {&reserve, "reserve"},
                          {a.grad_outputs, "grad_outputs"}, {a.grad_last_h, "grad_last_h"},
                          {a.grad_last_cell, "grad_last_cell"}};
  const Named outputs[] = {{a.d_inputs, "d_inputs"}, {a.d_weights, "d_weights"}, {a.d_bias, "d_bias"},
                           {a.d_h0, "d_h0"}, {a.d_c0, "d_c0"}};
  const int64_t size = element_size(dtype);
  Span in[std::size(inputs)], out[std::size(outputs)];
  for (size_t i = 0; i < std::size(inputs); ++i)
    if (i != 3 && (i < 4 || inputs[i].t != nullptr))
      in[i] = checked_span(fn, inputs[i], false, size);
  for (size_t o = 0; o < std::size(outputs); ++o)
    out[o] = checked_span(fn, outputs[o], true, size);
  check_rank(fn, a.inputs, "inputs", 3);
  check_rank(fn, a.h0, "h0", 2);
  const int64_t T = a.inputs->sizes[0], B = a.inputs->sizes[1], F = a.inputs->sizes[2], S = a.h0->sizes[1];
  if (a.grad_outputs != nullptr) check_shapes(fn, {{a.grad_outputs, "grad_outputs", {T, B, S}, "(T, B, S)"}});
  if (a.grad_last_h != nullptr) check_shapes(fn, {{a.grad_last_h, "grad_last_h", {B, S}, "(B, S)"}});
  if (a.grad_last_cell != nullptr) check_shapes(fn, {{a.grad_last_cell, "grad_last_cell", {B, S}, "(B, S)"}});
  check_shapes(fn, {{a.h0, "h0", {B, S}, "(B, S)"},
                    {a.weights, "weights", {3 * S, S + F}, "(3S, S+F)"},
                    {a.d_inputs, "d_inputs", {T, B, F}, "(T, B, F)"},
                    {a.d_weights, "d_weights", {3 * S, S + F}, "(3S, S+F)"},
                    {a.d_bias, "d_bias", {3 * S}, "(3S)"},
                    {a.d_h0, "d_h0", {B, S}, "(B, S)"},
                    {a.d_c0, "d_c0", {B, S}, "(B, S)"}});
  const SequenceSizes n{T, B, F, S};
  check_engine_sizes(fn, n, dtype);
  reserve = reserve_tensor(a.reserve, check_reserve(fn, a.reserve, reserve_bytes, n, dtype), dtype);
  in[3] = span_of(reserve, reserve.sizes[0] - 1, size);
  for (size_t i = 4; i < std::size(inputs); ++i)
    if (inputs[i].t == nullptr) in[i] = in[3];
  check_no_overlap(fn, outputs, out, inputs, in);
  return n;
}

}  // namespace lltm
