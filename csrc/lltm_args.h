// The validated arguments of one forward or backward call, as every backend
// receives them: tensor descriptors plus the sizes B, F and S.
#pragma once

#include <cstdint>

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

void validate(const SgdArgs& a);
void validate(const AdamArgs& a);

// Checks every argument (null pointers, ranks, sizes, strides, shapes against
// each other) and returns the sizes; throws lltm::Error naming the argument.
Sizes validate(const ForwardArgs& a);
Sizes validate(const BackwardArgs& a);

// Checks one tensor on its own; messages name the function and the argument.
void check_tensor(const lltm_tensor* t, const char* fn, const char* name, bool output);
void check_same_sizes(const lltm_tensor* a, const char* a_name, const lltm_tensor* b, const char* b_name);
void check_dtype(int32_t dtype, const char* fn);
int64_t element_size(int32_t dtype);
// Number of elements; the tensor must have passed check_tensor.
int64_t numel(const lltm_tensor& t);
bool is_contiguous(const lltm_tensor& t);
// A row-major contiguous descriptor of `data` with the sizes of `like`.
lltm_tensor contiguous_like(const lltm_tensor& like, void* data);

}  // namespace lltm
