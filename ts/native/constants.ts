/**
 * The C ABI's constants (csrc/lltm.h) and the descriptor layout, the one
 * place TypeScript holds them. tests/constants.test.ts checks this table
 * against the header, and the loader checks it against the library it opens
 * (lltm_abi_constant), refusing a library built with other values.
 */

/** Every constant of csrc/lltm.h, by its C name. */
export const headerConstants = {
  LLTM_ABI_VERSION: 2,
  LLTM_MAX_DIMS: 4,
  LLTM_OK: 0,
  LLTM_ERR_NULL_POINTER: 1,
  LLTM_ERR_INVALID_SHAPE: 2,
  LLTM_ERR_SHAPE_MISMATCH: 3,
  LLTM_ERR_INVALID_DTYPE: 4,
  LLTM_ERR_INVALID_DEVICE: 5,
  LLTM_ERR_BACKEND_UNAVAILABLE: 6,
  LLTM_ERR_OUT_OF_MEMORY: 7,
  LLTM_ERR_CUDA: 8,
  LLTM_ERR_INTERNAL: 9,
  LLTM_ERR_INVALID_ARGUMENT: 10,
  LLTM_FLOAT32: 0,
  LLTM_FLOAT64: 1,
  LLTM_CPU: 0,
  LLTM_CUDA: 1,
  LLTM_BACKEND_CPU: 1,
  LLTM_BACKEND_CUDA: 2,
  LLTM_ACCUMULATE_PARAM_GRADS: 1,
  LLTM_SEQUENCE_TRAINING: 1,
} as const;

/** The lltm_tensor layout that ts/native/descriptor.ts writes. */
export const layoutConstants = {
  "sizeof(lltm_tensor)": 80,
  "offsetof(lltm_tensor, data)": 0,
  "offsetof(lltm_tensor, ndim)": 8,
  "offsetof(lltm_tensor, sizes)": 16,
  "offsetof(lltm_tensor, strides)": 48,
} as const;

const h = headerConstants;

export const ABI_VERSION = h.LLTM_ABI_VERSION;
export const MAX_DIMS = h.LLTM_MAX_DIMS;
export const TENSOR_BYTES = layoutConstants["sizeof(lltm_tensor)"];

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

/** lltm_dtype, by the DType names. */
export const dtypeCode = { float32: h.LLTM_FLOAT32, float64: h.LLTM_FLOAT64 } as const;

/** lltm_device_kind, by the DeviceKind names. */
export const deviceKindCode = { cpu: h.LLTM_CPU, cuda: h.LLTM_CUDA } as const;

/** Bits of lltm_backends(). */
export const backendBit = { cpu: h.LLTM_BACKEND_CPU, cuda: h.LLTM_BACKEND_CUDA } as const;

export const ACCUMULATE_PARAM_GRADS = h.LLTM_ACCUMULATE_PARAM_GRADS;
export const SEQUENCE_TRAINING = h.LLTM_SEQUENCE_TRAINING;
