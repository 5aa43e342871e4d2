#include "overlap.h"

#include <string>

#include "status.h"

namespace lltm {

namespace {

struct Span {
  uintptr_t begin, end;  // bytes [begin, end)
};

// check_tensor has bounded the extent and made sure end does not wrap.
Span span_of(const lltm_tensor& t, int64_t element_size) {
  int64_t last = 0;
  for (int64_t d = 0; d < t.ndim; ++d) last += (t.sizes[d] - 1) * t.strides[d];
  const uintptr_t begin = reinterpret_cast<uintptr_t>(t.data);
  return {begin, begin + uintptr_t(last + 1) * uintptr_t(element_size)};
}

bool meet(const Span& a, const Span& b) { return a.begin < b.end && b.begin < a.end; }

[[noreturn]] void refuse(const char* fn, const Named& out, const Named& other, bool other_is_output) {
  fail(LLTM_ERR_INVALID_ARGUMENT,
       std::string(fn) + ": output '" + out.name + "' overlaps " + (other_is_output ? "output '" : "input '") +
           other.name + "' in memory; " +
           (other_is_output ? "outputs need memory of their own" : "an output must not share memory with an input"));
}

}  // namespace

void check_no_overlap(const char* fn, int64_t element_size, const Named* outputs, size_t n_outputs,
                      const Named* inputs, size_t n_inputs) {
  constexpr size_t kMax = 16;
  Span out[kMax], in[kMax];
  if (n_outputs > kMax || n_inputs > kMax) fail(LLTM_ERR_INTERNAL, std::string(fn) + ": too many tensors to check");
  for (size_t i = 0; i < n_outputs; ++i) out[i] = span_of(*outputs[i].t, element_size);
  for (size_t i = 0; i < n_inputs; ++i) in[i] = span_of(*inputs[i].t, element_size);
  // Branch-free over all pairs: a call costs a few dozen comparisons, and
  // the pair is looked for only when one met.
  bool any = false;
  for (size_t o = 0; o < n_outputs; ++o) {
    for (size_t i = 0; i < n_inputs; ++i) any |= meet(out[o], in[i]);
    for (size_t p = o + 1; p < n_outputs; ++p) any |= meet(out[o], out[p]);
  }
  if (!any) return;
  for (size_t o = 0; o < n_outputs; ++o) {
    for (size_t i = 0; i < n_inputs; ++i)
      if (meet(out[o], in[i])) refuse(fn, outputs[o], inputs[i], false);
    for (size_t p = o + 1; p < n_outputs; ++p)
      if (meet(out[o], out[p])) refuse(fn, outputs[o], outputs[p], true);
  }
}

bool same_view(const lltm_tensor& a, const lltm_tensor& b) {
  if (a.data != b.data || a.ndim != b.ndim) return false;
  for (int64_t d = 0; d < a.ndim; ++d)
    if (a.sizes[d] != b.sizes[d] || (a.sizes[d] > 1 && a.strides[d] != b.strides[d])) return false;
  return true;
}

}  // namespace lltm
