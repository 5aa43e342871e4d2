/**
 * The C ABI's constants, by the names the rest of lltm uses, all taken from
 * ts/native/abi.generated.ts (generated from csrc/lltm.h and csrc/lltm_ops.def
 * by scripts/gen-abi.ts). The loader checks the generated values against the
 * library it opens (lltm_abi_constant), refusing a library built with others.
 */
import { dtypeTable, headerConstants, layoutConstants } from "./abi.generated.ts";

export { dtypeTable, headerConstants, layoutConstants, opTable } from "./abi.generated.ts";

const h = headerConstants;

export const ABI_VERSION = h.LLTM_ABI_VERSION;
export const MAX_DIMS = h.LLTM_MAX_DIMS;
export const MAX_SLOTS = h.LLTM_MAX_SLOTS;
export const MAX_SCALARS = h.LLTM_MAX_SCALARS;
export const TENSOR_BYTES = layoutConstants["sizeof(lltm_tensor)"];
export const CALL_BYTES = layoutConstants["sizeof(lltm_call)"];

/** lltm_status, by the names LLTMError's `code` uses. */
export const Status = {
  OK: h.LLTM_OK,
  NULL_POINTER: h.LLTM_ERR_NULL_POINTER,
  INVALID_SHAPE: h.LLTM_ERR_INVALID_SHAPE,
  SHAPE_MISMATCH: h.LLTM_ERR_SHAPE_MISMATCH,
  INVALID_DTYPE: h.LLTM_ERR_INVALID_DTYPE,
  INVALID_DEVICE: h.LLTM_ERR_INVALID_DEVICE,
  BACKEND_UNAVAILABLE: h.LLTM_ERR_BACKEND_UNAVAILABLE,
  OUT_OF_MEMORY: h.LLTM_ERR_OUT_OF_MEMORY,
  CUDA: h.LLTM_ERR_CUDA,
  INTERNAL: h.LLTM_ERR_INTERNAL,
  INVALID_ARGUMENT: h.LLTM_ERR_INVALID_ARGUMENT,
} as const;

export type StatusName = keyof typeof Status;

/** Every element type of the table by name, including those (uint8) no Tensor has. */
export type ElementType = keyof typeof dtypeTable;

/** lltm_dtype, by the element type names. */
export const dtypeCode = Object.fromEntries(
  Object.entries(dtypeTable).map(([name, d]) => [name, d.code]),
) as { readonly [K in ElementType]: (typeof dtypeTable)[K]["code"] };

/** lltm_device_kind, by the DeviceKind names. */
export const deviceKindCode = { cpu: h.LLTM_CPU, cuda: h.LLTM_CUDA } as const;

/** Bits of lltm_backends(). */
export const backendBit = { cpu: h.LLTM_BACKEND_CPU, cuda: h.LLTM_BACKEND_CUDA } as const;

/** lltm_set_float32_matmul_precision's values, by torch.set_float32_matmul_precision's names. */
export const matmulPrecisionCode = {
  highest: h.LLTM_MATMUL_PRECISION_HIGHEST,
  high: h.LLTM_MATMUL_PRECISION_HIGH,
  medium: h.LLTM_MATMUL_PRECISION_MEDIUM,
} as const;

export const ACCUMULATE_PARAM_GRADS = h.LLTM_ACCUMULATE_PARAM_GRADS;
export const SEQUENCE_TRAINING = h.LLTM_SEQUENCE_TRAINING;
export const COPY_NON_BLOCKING = h.LLTM_COPY_NON_BLOCKING;

/** lltm_memory_stat_kind, by the names of memoryStats()' fields. */
export const memoryStatCode = {
  allocated: h.LLTM_MEMORY_ALLOCATED,
  peakAllocated: h.LLTM_MEMORY_PEAK_ALLOCATED,
  reserved: h.LLTM_MEMORY_RESERVED,
} as const;
