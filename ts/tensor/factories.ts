/** The ways to make a tensor: empty, filled, from host arrays, from a seeded generator. */
import { Device } from "../device.ts";
import { checkDType, type DType, isFloat, isHalf, itemSize, valueArray, valueDType } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import * as native from "../native/index.ts";
import { Random } from "../random.ts";
import { Storage } from "../storage.ts";
import { converted } from "./copies.ts";
import { byteCount, checkShape, contiguousStrides, numelOf } from "./shape.ts";
import { deviceOf, type NestedArray, type RandomOptions, Tensor, type TensorOptions } from "./tensor.ts";

/** An uninitialised tensor; `fn`, the public function making it, is named in a failure. */
export function empty(shape: readonly number[], options: TensorOptions, fn = "Tensor.empty"): Tensor {
  const dtype = checkDType(options.dtype ?? "float32");
  const device = deviceOf(options.device);
  const dims = checkShape(shape, "shape");
  const pinned = options.pinMemory ?? false;
  if (typeof pinned !== "boolean") throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'pinMemory' must be a boolean, got ${String(pinned)}`);
  if (pinned && device !== Device.cpu) {
    throw new LLTMError("INVALID_DEVICE", `${fn}: pinMemory is for host tensors (device "cpu"), got device ${device}`);
  }
  const storage = Storage.allocate(byteCount(dims, dtype), device, fn, 1, pinned);
  return new Tensor(storage, dtype, dims, contiguousStrides(dims));
}

export function full(shape: readonly number[], value: number, options: TensorOptions, fn = "Tensor.full"): Tensor {
  const t = empty(shape, options, fn);
  try {
    t.fill(value);
  } catch (e) {
    t.dispose();
    throw e;
  }
  return t;
}

/** The dtype whose storage a host array holds as it is, or undefined for one that holds raw half bits. */
function arrayDType(data: Float32Array | Float64Array | Uint16Array | Int32Array): DType | undefined {
  if (data instanceof Float32Array) return "float32";
  if (data instanceof Float64Array) return "float64";
  if (data instanceof Int32Array) return "int32";
  return undefined;
}

export function fromTypedArray(
  data: Float32Array | Float64Array | Uint16Array | Int32Array, shape: readonly number[] | undefined, options: TensorOptions,
): Tensor {
  const fn = "fromTypedArray";
  if (!(data instanceof Float32Array || data instanceof Float64Array || data instanceof Uint16Array || data instanceof Int32Array)) {
    throw new LLTMError(
      "INVALID_ARGUMENT",
      `${fn}: data must be a Float32Array, a Float64Array, an Int32Array or a Uint16Array (half bits)`,
    );
  }
  const dtype = options.dtype === undefined ? arrayDType(data) : checkDType(options.dtype, `${fn}: dtype`);
  const source = arrayDType(data);
  if (dtype === undefined || (source === undefined && !isHalf(dtype))) {
    throw new LLTMError(
      "INVALID_DTYPE",
      `${fn}: a Uint16Array holds the bits of a "bfloat16" or "float16" tensor; pass that dtype, got ${JSON.stringify(options.dtype)}`,
    );
  }
  if ((source === "int32") !== (dtype === "int32")) {
    throw new LLTMError(
      "INVALID_DTYPE",
      `${fn}: an "int32" tensor comes from an Int32Array and an Int32Array makes an "int32" tensor; got ${data.constructor.name} and dtype ${JSON.stringify(dtype)}`,
    );
  }
  const dims = checkShape(shape ?? [data.length], `${fn}: shape`);
  if (numelOf(dims) !== data.length) {
    throw new LLTMError(
      "INVALID_ARGUMENT",
      `${fn}: shape [${dims.join(", ")}] holds ${numelOf(dims)} elements but data has ${data.length}`,
    );
  }
  // Host values reach a type computed in float32 as float32 values (rounded here, as PyTorch converts
  // a double); then the bytes go in as they are (or a half type's bits) and convert on the device.
  const host = source === "float64" && valueDType(dtype) === "float32" ? Float32Array.from(data) : data;
  const stored = host === data ? source ?? dtype : "float32";
  const pinMemory = options.pinMemory ?? false;
  const t = empty(dims, { dtype: stored, device: options.device, pinMemory }, `Tensor.${fn}`);
  try {
    native.write(fn, t, host);
    if (stored === dtype) return t;
    const out = converted(t, dtype, t.device, {}, pinMemory, `Tensor.${fn}`);
    t.dispose();
    return out;
  } catch (e) {
    t.dispose();
    throw e;
  }
}

export function fromArray(data: NestedArray, options: TensorOptions): Tensor {
  const shape: number[] = [];
  for (let level: NestedArray = data; Array.isArray(level); level = level[0]!) {
    if (level.length === 0) throw new LLTMError("INVALID_ARGUMENT", "fromArray: arrays must not be empty");
    shape.push(level.length);
  }
  if (shape.length === 0) throw new LLTMError("INVALID_ARGUMENT", "fromArray: data must be an array");
  const dtype = checkDType(options.dtype ?? "float32");
  // The values in the type the dtype is computed in (float32 for the half types, as PyTorch converts).
  const flat = valueArray(dtype, numelOf(checkShape(shape, "fromArray: shape")));
  let n = 0;
  const walk = (value: NestedArray, depth: number) => {
    if (depth === shape.length) {
      if (typeof value !== "number") throw new LLTMError("INVALID_ARGUMENT", "fromArray: ragged or non-numeric data");
      if (dtype === "int32" && !(Number.isInteger(value) && value >= -2147483648 && value <= 2147483647)) {
        throw new LLTMError("INVALID_ARGUMENT", `fromArray: an "int32" tensor holds integers from -2^31 to 2^31-1, got ${value}`);
      }
      flat[n++] = value;
      return;
    }
    if (!Array.isArray(value) || value.length !== shape[depth]) {
      throw new LLTMError("INVALID_ARGUMENT", `fromArray: ragged data at depth ${depth}; expected ${shape[depth]} items`);
    }
    for (const v of value) walk(v, depth + 1);
  };
  walk(data, 0);
  return fromTypedArray(flat, shape, { dtype, device: options.device });
}

export function randn(shape: readonly number[], options: RandomOptions): Tensor {
  const rng = new Random(options.seed ?? 0);
  return generate(shape, options, () => rng.normal());
}

export function rand(shape: readonly number[], options: RandomOptions & { low?: number; high?: number }): Tensor {
  const rng = new Random(options.seed ?? 0);
  const low = options.low ?? 0, high = options.high ?? 1;
  return generate(shape, options, () => low + (high - low) * rng.uniform());
}

/** Values from `next` in the dtype's compute type, rounded to the dtype on its device. */
function generate(shape: readonly number[], options: TensorOptions, next: () => number): Tensor {
  const dtype = checkDType(options.dtype ?? "float32");
  if (!isFloat(dtype)) throw new LLTMError("INVALID_DTYPE", `random values are of a float type, got dtype ${JSON.stringify(dtype)}`);
  const dims = checkShape(shape, "shape");
  const values = valueArray(dtype, byteCount(dims, dtype) / itemSize(dtype));
  for (let i = 0; i < values.length; i++) values[i] = next();
  return fromTypedArray(values, dims, { dtype, device: options.device });
}
