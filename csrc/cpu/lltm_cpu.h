// The CPU backend: the LLTM kernels and host memory. Arguments are validated
// by the caller (api.cpp); these throw lltm::Error on failure. The kernels
// run the instruction-set variant chosen at load time (isa_dispatch.cpp).
#pragma once

#include <cstdint>

#include "../lltm_args.h"

namespace lltm::cpu {

void lltm_forward(const ForwardArgs& args, int32_t dtype);
void lltm_backward(const BackwardArgs& args, int32_t dtype);
// Whole sequences (sequence_cpu.cpp).
void lltm_sequence_forward(const SequenceForwardArgs& args, int32_t dtype);
void lltm_sequence_backward(const SequenceBackwardArgs& args, int32_t dtype);

void* alloc(uint64_t bytes);
void free(void* data);
// dst and src have equal sizes (checked by the caller).
void copy(const lltm_tensor& dst, const lltm_tensor& src, int32_t dtype);
void fill(const lltm_tensor& dst, double value, int32_t dtype);

// y += alpha * x (equal sizes, checked by the caller).
void axpy(const lltm_tensor& y, double alpha, const lltm_tensor& x, int32_t dtype);
void sgd_step(const SgdArgs& args, int32_t dtype);
void adam_step(const AdamArgs& args, int32_t dtype);

// The name of the kernels' variant in use: avx512, avx2, baseline or native.
const char* kernels_name();

}  // namespace lltm::cpu
