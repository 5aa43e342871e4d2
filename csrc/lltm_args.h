// The validated arguments of one forward or backward call, as every backend
// receives them: tensor descriptors plus the sizes B, F and S.
#pragma once

#include <cstdint>
#include <string>

#include "lltm.h"

namespace lltm {

struct Sizes {
  int64_t batch;     // B
  int64_t features;  // F
  int64_t state;     // S
};

struct ForwardArgs {
  const lltm_tensor *input, *weights, *bias, *old_h, *old_cell;
  const lltm_tensor *new_h, *new_cell, *input_gate, *output_gate, *candidate_cell, *X, *gate_weights;
  Sizes n;
};

struct BackwardArgs {
  const lltm_tensor *grad_h, *grad_cell, *new_cell, *input_gate, *output_gate, *candidate_cell, *X,
      *gate_weights, *weights;
  const lltm_tensor *d_old_h, *d_input, *d_weights, *d_bias, *d_old_cell;
  const lltm_tensor* grad_output;  // nullptr when absent; else added to grad_h
  Sizes n;
  bool accumulate;  // add d_weights and d_bias to the outputs' contents
};

// Hyperparameters of an optimizer step; the tensors are contiguous and of equal sizes.
struct SgdArgs {
  const lltm_tensor *param, *grad, *momentum_buffer;  // momentum_buffer is NULL when momentum == 0
  double lr, momentum;
};

struct AdamArgs {
  const lltm_tensor *param, *grad, *exp_avg, *exp_avg_sq;
  double lr, beta1, beta2, eps;
  int64_t step;
};

// The limits every descriptor and allocation is held to: a tensor spans at
// most kMaxExtent elements (so no offset computation overflows int64, and a
// span's bytes stay below 2^63 for every dtype), an allocation at most
// kMaxBytes bytes.
constexpr int64_t kMaxExtent = int64_t(1) << 48;
constexpr uint64_t kMaxBytes = uint64_t(1) << 63;

// Checks one tensor on its own; messages name the function and the argument.
// Returns the offset of its last element (below kMaxExtent).
int64_t check_tensor(const lltm_tensor* t, const char* fn, const char* name, bool output);

// check_tensor's rules as one predicate, for the calls that pass (check_tensor
// then says which rule a failing one broke): whether t passes, and if so the
// offset of its last element in *last (else 0).
inline bool tensor_fits(const lltm_tensor& t, bool output, int64_t* last) {
  *last = 0;
  const int64_t ndim = t.ndim;
  if (t.data == nullptr || uint64_t(ndim) - 1 >= uint64_t(LLTM_MAX_DIMS)) return false;
  int64_t end = 0;
  for (int64_t d = 0; d < ndim; ++d) {
    const int64_t size = t.sizes[d], stride = t.strides[d];
    if (uint64_t(size) - 1 >= uint64_t(kMaxExtent) || uint64_t(stride) > uint64_t(kMaxExtent)) return false;
    if (output && stride == 0 && size > 1) return false;
    int64_t step;
    if (__builtin_mul_overflow(size - 1, stride, &step) || __builtin_add_overflow(end, step, &end) ||
        end >= kMaxExtent)
      return false;
  }
  if (reinterpret_cast<uintptr_t>(t.data) > UINTPTR_MAX - uintptr_t(end + 1) * 8) return false;
  *last = end;
  return true;
}

void check_same_sizes(const char* fn, const lltm_tensor* a, const char* a_name, const lltm_tensor* b,
                      const char* b_name);
// The dtype argument of the typed entry points of versions 1 and 2.
void check_dtype(int32_t dtype, const char* fn);
// A scalar in [lo, hi] (hi_open: [lo, hi)), finite.
void check_range(const char* fn, const char* name, double v, double lo, double hi, bool hi_open);
// "[2, 3]"
std::string shape_string(const lltm_tensor& t);
// An allocation's size: 1 to kMaxBytes.
void check_bytes(uint64_t bytes, const char* fn);
int64_t element_size(int32_t dtype);
// Number of elements; the tensor must have passed check_tensor.
int64_t numel(const lltm_tensor& t);
bool is_contiguous(const lltm_tensor& t);
// A row-major contiguous descriptor of `data` with the sizes of `like`.
lltm_tensor contiguous_like(const lltm_tensor& like, void* data);

// A whole sequence (lltm_sequence_*): T steps of B rows.
struct SequenceSizes {
  int64_t steps;     // T
  int64_t batch;     // B
  int64_t features;  // F
  int64_t state;     // S
};

struct SequenceForwardArgs {
  const lltm_tensor *inputs, *weights, *bias, *h0, *c0;
  const lltm_tensor *outputs, *last_h, *last_cell;
  void* reserve;  // nullptr for inference (no LLTM_SEQUENCE_TRAINING)
  const lltm_tensor* lengths;  // int32 [B], each in [1, T] (checked by the backend); nullptr: all T
  SequenceSizes n;
};

struct SequenceBackwardArgs {
  const lltm_tensor *grad_outputs, *grad_last_h, *grad_last_cell;  // each may be nullptr: zeros
  const void* reserve;
  const lltm_tensor *inputs, *weights, *h0;
  const lltm_tensor *d_inputs, *d_weights, *d_bias, *d_h0, *d_c0;
  const lltm_tensor* lengths;  // as the forward's
  SequenceSizes n;
  bool accumulate;  // add d_weights and d_bias to the outputs' contents
};

// Bytes of a training forward's reserve: T*B*5*S elements; throws
// LLTM_ERR_INVALID_ARGUMENT when that overflows (`fn` names the caller).
uint64_t sequence_reserve_bytes(const SequenceSizes& n, int32_t dtype, const char* fn);

}  // namespace lltm
