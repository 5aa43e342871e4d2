/**
 * How float32 matrix products may round, as PyTorch's
 * torch.set_float32_matmul_precision: "highest" (the default) computes them
 * in exact float32; "high" lets the CUDA backend use TF32 tensor cores
 * (inputs rounded to 10 mantissa bits, float32 accumulation: about 1e-3
 * relative error per product), "medium" also bfloat16 ones (8 bits); the
 * CUDA sequence engine's persistent recurrence takes its product on the
 * tensor cores likewise (TF32 under "high", bfloat16 under "medium"). The
 * setting is process-wide and read at each call; the CPU, float64 and the
 * CUDA backend's own product kernels compute exactly at every setting. A
 * call whose tensors are all bfloat16 (float16) computes its products as at
 * "medium" ("high") at least, as PyTorch's bfloat16 and float16 products do.
 */
import { LLTMError } from "./errors.ts";
import * as native from "./native/index.ts";

export type Float32MatmulPrecision = native.Float32MatmulPrecision;

export const float32MatmulPrecisions: readonly Float32MatmulPrecision[] = ["highest", "high", "medium"];

/** Sets how float32 matrix products may round; throws INVALID_ARGUMENT for another name, changing nothing. */
export function setFloat32MatmulPrecision(precision: Float32MatmulPrecision): void {
  if (!float32MatmulPrecisions.includes(precision)) {
    throw new LLTMError(
      "INVALID_ARGUMENT",
      `setFloat32MatmulPrecision: 'precision' must be "highest", "high" or "medium", got ${JSON.stringify(precision)}`,
    );
  }
  native.setFloat32MatmulPrecision(precision, "setFloat32MatmulPrecision");
}

/** The precision in force, as torch.get_float32_matmul_precision. */
export function getFloat32MatmulPrecision(): Float32MatmulPrecision {
  return native.float32MatmulPrecision();
}
