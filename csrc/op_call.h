// A validated call of one op, as the CPU kernels and every device backend
// receive it: the op's tensors by slot (in lltm_ops.def's order), its
// scalars, its flags and its named sizes.
#pragma once

#include <cstdint>

#include "lltm.h"

namespace lltm {

struct OpCall {
  int32_t op;  // an lltm_op
  // The float type the kernels compute in: LLTM_FLOAT32 or LLTM_FLOAT64,
  // or on a device backend whose takes_half(op) says so, a half type
  // where every FLOAT tensor of the call has it (computed in float32 from
  // its storage). Every FLOAT tensor a backend receives has this dtype (the
  // library stages others through it); INDEX slots have LLTM_INT32, BYTES
  // slots LLTM_UINT8.
  // A call with no FLOAT tensor (a CAT of int32) has its INDEX type here.
  // The CPU's bfloat16 kernels (cpu/kernels.h, run_bf16) get LLTM_BFLOAT16
  // here, with every FLOAT tensor bfloat16.
  int32_t compute;
  uint32_t flags;
  // LLTM_MATMUL_PRECISION_* in force when the call was made: how float32
  // products may round (lltm_set_float32_matmul_precision).
  int32_t float32_matmul_precision = LLTM_MATMUL_PRECISION_HIGHEST;
  const lltm_tensor* tensors[LLTM_MAX_SLOTS] = {};  // nullptr for an absent optional slot and past the op's slots
  double scalars[LLTM_MAX_SCALARS];
  int64_t sizes[26];  // the named sizes by letter (sizes['B' - 'A']); 0 where the op has none

  const lltm_tensor* tensor(int slot) const { return tensors[slot]; }
  int64_t size(char name) const { return sizes[name - 'A']; }
};

}  // namespace lltm
