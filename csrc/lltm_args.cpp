#include "lltm_args.h"

#include <string>
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iterator>

#include "ops/dtypes.h"
#include "status.h"

namespace lltm {

std::string shape_string(const lltm_tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.ndim; ++d) s += (d ? ", " : "") + std::to_string(t.sizes[d]);
  return s + "]";
}

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

int64_t element_size(int32_t dtype) { return dtype_info(dtype)->bytes; }

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

void check_range(const char* fn, const char* name, double v, double lo, double hi, bool hi_open) {
  const bool ok = std::isfinite(v) && v >= lo && (hi_open ? v < hi : v <= hi);
  if (!ok)
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": '" + name + "' must be in [" + std::to_string(lo) + ", " +
                                     std::to_string(hi) + (hi_open ? ")" : "]") + ", got " + std::to_string(v));
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

}  // namespace lltm
