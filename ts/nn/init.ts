/** Parameter initialisation from a seeded generator: the same seed gives the same values on every device and runtime. */
import { Device, type DeviceLike } from "../device.ts";
import { checkDType, type DType, itemSize, valueArray } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import type { Random } from "../random.ts";
import { Tensor } from "../tensor/index.ts";

/** Where a module's parameters are made: dtype (default float32), device (default cpu) and seed (default 0). */
export interface ParameterOptions {
  dtype?: DType;
  device?: DeviceLike;
  seed?: number;
}

export interface Placement {
  dtype: DType;
  device: Device;
}

/** The options' dtype and device, checked, naming `fn`. */
export function placement(fn: string, options: ParameterOptions): Placement {
  return { dtype: checkDType(options.dtype ?? "float32", `${fn}: dtype`), device: Device.of(options.device ?? "cpu") };
}

/** Checks that each named size is a positive integer, naming `fn`. */
export function checkSizes(fn: string, sizes: Record<string, number>): void {
  for (const [name, v] of Object.entries(sizes)) {
    if (!Number.isSafeInteger(v) || v < 1) throw new LLTMError("INVALID_ARGUMENT", `${fn}: '${name}' must be a positive integer, got ${v}`);
  }
}

/** Values uniform in [-bound, bound) of `shape`. */
export function uniform(fn: string, shape: readonly number[], bound: number, rng: Random, at: Placement): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  if (n * itemSize(at.dtype) > Number.MAX_SAFE_INTEGER) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: a parameter of shape [${shape.join(", ")}] would take more bytes than a tensor can have`);
  }
  const values = valueArray(at.dtype, n);
  for (let i = 0; i < n; i++) values[i] = -bound + 2 * bound * rng.uniform();
  return Tensor.fromTypedArray(values, shape, at);
}

/** Standard normal values of `shape` (nn.Embedding's initialisation). */
export function normal(shape: readonly number[], rng: Random, at: Placement): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const values = valueArray(at.dtype, n);
  for (let i = 0; i < n; i++) values[i] = rng.normal();
  return Tensor.fromTypedArray(values, shape, at);
}
