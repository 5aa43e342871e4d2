// The CPU kernels of one instruction-set variant. The sources listed in
// LLTM_CPU_ISA_SOURCES (CMakeLists.txt) are compiled once per variant with
// that variant's flags and LLTM_ISA_NAMESPACE set to its name (avx512, avx2,
// baseline or native), so each variant's functions, and the inline functions
// and templates of gemm.h and vector_math.h they use, live in
// lltm::cpu::<variant> and never mix. isa_dispatch.cpp picks one table when
// the library loads. A kernel joins by a declaration here, an entry in
// Kernels and in kernel_table.cpp, and a forwarding function in
// isa_dispatch.cpp.
#pragma once

#include <cstdint>

#include "../lltm_args.h"

namespace lltm::cpu {

struct Kernels {
  void (*forward)(const ForwardArgs& args, int32_t dtype);
  void (*backward)(const BackwardArgs& args, int32_t dtype);
  void (*axpy)(const lltm_tensor& y, double alpha, const lltm_tensor& x, int32_t dtype);
  void (*sgd_step)(const SgdArgs& args, int32_t dtype);
  void (*adam_step)(const AdamArgs& args, int32_t dtype);
  void (*sequence_forward)(const SequenceForwardArgs& args, int32_t dtype);
  void (*sequence_backward)(const SequenceBackwardArgs& args, int32_t dtype);
};

#ifdef LLTM_ISA_NAMESPACE
namespace LLTM_ISA_NAMESPACE {

void lltm_forward(const ForwardArgs& args, int32_t dtype);
void lltm_backward(const BackwardArgs& args, int32_t dtype);
void axpy(const lltm_tensor& y, double alpha, const lltm_tensor& x, int32_t dtype);
void sgd_step(const SgdArgs& args, int32_t dtype);
void adam_step(const AdamArgs& args, int32_t dtype);
// Whole sequences (sequence_cpu.cpp).
void lltm_sequence_forward(const SequenceForwardArgs& args, int32_t dtype);
void lltm_sequence_backward(const SequenceBackwardArgs& args, int32_t dtype);

extern const Kernels kernels;

}  // namespace LLTM_ISA_NAMESPACE
#endif

}  // namespace lltm::cpu
