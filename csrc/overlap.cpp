#include "overlap.h"

#include <cstring>
#include <string>

#include "status.h"

namespace lltm {

namespace {

[[noreturn]] void refuse(const char* fn, const Named& out, const Named& other, bool other_is_output) {
  fail(LLTM_ERR_INVALID_ARGUMENT,
       std::string(fn) + ": output '" + out.name + "' overlaps " + (other_is_output ? "output '" : "input '") +
           other.name + "' in memory; " +
           (other_is_output ? "outputs need memory of their own" : "an output must not share memory with an input"));
}

// 32-bit lanes of the vector comparisons (SSE2 everywhere, wider with -march).
typedef int32_t Lanes __attribute__((vector_size(16)));
constexpr size_t kLanes = sizeof(Lanes) / sizeof(int32_t);

}  // namespace

bool any_overlap(const Span* spans, size_t n_outputs, size_t n) {
  // All pairs of a call's dozen spans take a few hundred scalar instructions;
  // offsets from the lowest address fit 31 bits whenever the spans lie within
  // 2 GiB of each other, and then four pairs go per instruction.
  uintptr_t low = spans[0].begin, high = spans[0].end;
  for (size_t i = 1; i < n; ++i) {
    low = spans[i].begin < low ? spans[i].begin : low;
    high = spans[i].end > high ? spans[i].end : high;
  }
  constexpr size_t kMax = 16;
  if (high - low >= (uintptr_t(1) << 31) || n > kMax) {
    for (size_t o = 0; o < n_outputs; ++o)
      for (size_t j = o + 1; j < n; ++j)
        if (meet(spans[o], spans[j])) return true;
    return false;
  }
  // Padding lanes are empty spans at 0, which meet nothing (every end is above 0).
  alignas(16) int32_t begin[kMax] = {}, end[kMax] = {};
  for (size_t i = 0; i < n; ++i) {
    begin[i] = int32_t(spans[i].begin - low);
    end[i] = int32_t(spans[i].end - low);
  }
  // Each non-empty output meets itself once; any count above that is an
  // overlap (two outputs that meet count twice, an output and an input once).
  int32_t self_meets = 0;
  for (size_t o = 0; o < n_outputs; ++o) self_meets += begin[o] < end[o];
  Lanes count = {};
  for (size_t c = 0; c < (n + kLanes - 1) / kLanes; ++c) {
    Lanes bc, ec;
    std::memcpy(&bc, begin + c * kLanes, sizeof bc);
    std::memcpy(&ec, end + c * kLanes, sizeof ec);
    for (size_t o = 0; o < n_outputs; ++o) count -= (begin[o] < ec) & (bc < end[o]);
  }
  int32_t total = 0;
  for (size_t l = 0; l < kLanes; ++l) total += count[l];
  return total != self_meets;
}

void refuse_overlap(const char* fn, const Named* outputs, const Span* out, size_t n_outputs, const Named* inputs,
                    const Span* in, size_t n_inputs) {
  for (size_t o = 0; o < n_outputs; ++o) {
    for (size_t i = 0; i < n_inputs; ++i)
      if (meet(out[o], in[i])) refuse(fn, outputs[o], inputs[i], false);
    for (size_t p = o + 1; p < n_outputs; ++p)
      if (meet(out[o], out[p])) refuse(fn, outputs[o], outputs[p], true);
  }
  fail(LLTM_ERR_INTERNAL, std::string(fn) + ": an overlap was found, then not");
}

bool same_view(const lltm_tensor& a, const lltm_tensor& b) {
  if (a.data != b.data || a.ndim != b.ndim) return false;
  for (int64_t d = 0; d < a.ndim; ++d)
    if (a.sizes[d] != b.sizes[d] || (a.sizes[d] > 1 && a.strides[d] != b.strides[d])) return false;
  return true;
}

}  // namespace lltm
