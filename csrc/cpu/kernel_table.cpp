// This variant's entry in the table of CPU kernels (kernels.h): run_<ID> at index LLTM_OP_<ID>.
#include "kernels.h"

#include "../op_slots.h"
#include "bf16_gemm.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

namespace {

constexpr Kernels table() {
  Kernels k{};
#define LLTM_DTYPE(ID, code, name, bytes, cls)
#define LLTM_OP(ID, code, entry, sizes, flags) k.run[code] = &run_##ID;
#define LLTM_SLOT(name, role, shape)
#define LLTM_SCALAR(name, kind, lo, hi)
#include "../lltm_ops.def"
#undef LLTM_DTYPE
#undef LLTM_OP
#undef LLTM_SLOT
#undef LLTM_SCALAR
#ifdef LLTM_HAVE_BF16_KERNELS
  k.run_bf16[LLTM_OP_FORWARD] = &run_FORWARD_bf16;
  k.run_bf16[LLTM_OP_BACKWARD] = &run_BACKWARD_bf16;
  k.run_bf16[LLTM_OP_SEQUENCE_FORWARD] = &run_SEQUENCE_FORWARD_bf16;
  k.run_bf16[LLTM_OP_SEQUENCE_BACKWARD] = &run_SEQUENCE_BACKWARD_bf16;
  k.run_bf16_float32_slots[LLTM_OP_BACKWARD] = 1u << slots::BACKWARD::d_weights | 1u << slots::BACKWARD::d_bias;
  k.run_bf16_float32_slots[LLTM_OP_SEQUENCE_BACKWARD] =
      1u << slots::SEQUENCE_BACKWARD::d_weights | 1u << slots::SEQUENCE_BACKWARD::d_bias;
#endif
  return k;
}

}  // namespace

extern const Kernels kernels = table();

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
