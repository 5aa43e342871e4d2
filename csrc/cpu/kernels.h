// The CPU kernels of one instruction-set variant. The sources listed in
// LLTM_CPU_ISA_SOURCES (CMakeLists.txt: csrc/cpu/ops/ and the kernels they
// call) are compiled once per variant with that variant's flags and
// LLTM_ISA_NAMESPACE set to its name (avx512, avx2, baseline or native), so
// each variant's functions, and the inline functions and templates of gemm.h
// and vector_math.h they use, live in lltm::cpu::<variant> and never mix.
// isa_dispatch.cpp picks one table when the library loads. Each variant runs
// every op of lltm_ops.def through run_<ID>, defined in csrc/cpu/ops/.
#pragma once

#include <cstdint>

#include "../lltm_args.h"
#include "../op_call.h"

namespace lltm::cpu {

// Indexed by op id; the calls arrive validated, their float tensors in call.compute.
// run_bf16 holds the ops with a kernel of their own for calls whose float
// tensors are all bfloat16 and contiguous (the others, a reserve's bytes or
// int32 lengths, as the op takes them) (call.compute is then LLTM_BFLOAT16),
// null elsewhere; they need AVX512_BF16, which isa_dispatch.cpp checks.
// run_bf16_float32_slots: the slots (bits) a bfloat16 kernel also takes in
// float32, the parameter gradients that mixed precision keeps in float32
// beside bfloat16 weights.
struct Kernels {
  void (*run[LLTM_OP_END])(const OpCall& call);
  void (*run_bf16[LLTM_OP_END])(const OpCall& call);
  uint32_t run_bf16_float32_slots[LLTM_OP_END];
};

#ifdef LLTM_ISA_NAMESPACE
namespace LLTM_ISA_NAMESPACE {

#define LLTM_DTYPE(ID, code, name, bytes, cls)
#define LLTM_OP(ID, code, entry, sizes, flags) void run_##ID(const OpCall& call);
#define LLTM_SLOT(name, role, shape)
#define LLTM_SCALAR(name, kind, lo, hi)
#include "../lltm_ops.def"
#undef LLTM_DTYPE
#undef LLTM_OP
#undef LLTM_SLOT
#undef LLTM_SCALAR

// The bfloat16 step on AVX512_BF16 (lltm_bf16.cpp; the AVX-512 variant only: bf16_gemm.h).
void run_FORWARD_bf16(const OpCall& call);
void run_BACKWARD_bf16(const OpCall& call);
// Whole sequences in bfloat16 on AVX512_BF16 (sequence_bf16.cpp; likewise).
void run_SEQUENCE_FORWARD_bf16(const OpCall& call);
void run_SEQUENCE_BACKWARD_bf16(const OpCall& call);

// The kernels the ops' files adapt (lltm_cpu.cpp, sequence_cpu.cpp, elementwise_cpu.cpp).
void lltm_forward(const ForwardArgs& args, int32_t dtype);
void lltm_backward(const BackwardArgs& args, int32_t dtype);
void axpy(const lltm_tensor& y, double alpha, const lltm_tensor& x, int32_t dtype);
void sgd_step(const SgdArgs& args, int32_t dtype);
void adam_step(const AdamArgs& args, int32_t dtype);
void lltm_sequence_forward(const SequenceForwardArgs& args, int32_t dtype);
void lltm_sequence_backward(const SequenceBackwardArgs& args, int32_t dtype);

extern const Kernels kernels;

}  // namespace LLTM_ISA_NAMESPACE
#endif

}  // namespace lltm::cpu
