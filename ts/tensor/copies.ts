/**
 * Copies and conversions: between devices and between dtypes through the
 * native COPY op (which converts, rounding to nearest even), in-place fills
 * and updates, and reading the elements back to the host.
 */
import { Device, type DeviceLike } from "../device.ts";
import { checkDType, type DType, isDType, isHalf, type StorageArray, storageArray, valueArray, valueDType } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import { COPY_NON_BLOCKING } from "../native/constants.ts";
import * as native from "../native/index.ts";
import type { ArgumentNames } from "../native/index.ts";
import { empty } from "./factories.ts";
import { type CopyOptions, disposedError, type NestedArray, Tensor } from "./tensor.ts";

const COPY = native.op("COPY"), FILL = native.op("FILL"), AXPY = native.op("AXPY");
const copyNames: ArgumentNames = { dst: "the tensor", src: "'src'" };
const fillNames: ArgumentNames = { dst: "the tensor" };
const axpyNames: ArgumentNames = { y: "the tensor", x: "'other'" };

export function contiguous(t: Tensor): Tensor {
  t.assertLive("contiguous");
  if (t.isContiguous()) return t.retain();
  return clone(t, undefined);
}

export function clone(t: Tensor, device: DeviceLike | undefined): Tensor {
  t.assertLive("clone");
  return converted(t, t.dtype, device === undefined ? t.device : Device.of(device));
}

/** A contiguous copy of `t` of `dtype` on `device` (in pinned host memory with `pinMemory`), allocated for `fn`. */
export function converted(
  t: Tensor, dtype: DType, device: Device, options: CopyOptions = {}, pinMemory = false,
  fn = pinMemory ? "pinMemory" : "Tensor.empty",
): Tensor {
  const out = empty(t.shape, { dtype, device, pinMemory }, fn);
  try {
    copyFrom(out, t, options);
  } catch (e) {
    out.dispose();
    throw e;
  }
  return out;
}

export function to(t: Tensor, target: DeviceLike | DType, options: CopyOptions): Tensor {
  t.assertLive("to");
  checkCopyOptions("to", options);
  if (isDType(target)) return cast(t, target);
  const device = Device.of(target);
  if (device.equals(t.device)) return t.retain();
  return converted(t, t.dtype, device, options);
}

export function pinMemory(t: Tensor): Tensor {
  t.assertLive("pinMemory");
  if (t.device !== Device.cpu) {
    throw new LLTMError("INVALID_DEVICE", `pinMemory: only host tensors are pinned; the tensor is on ${t.device}`);
  }
  if (t.isPinned()) return t.retain();
  return converted(t, t.dtype, Device.cpu, {}, true);
}

function checkCopyOptions(fn: string, options: CopyOptions): void {
  if (typeof options !== "object" || options === null) throw new LLTMError("INVALID_ARGUMENT", `${fn}: options must be an object`);
  if (options.nonBlocking !== undefined && typeof options.nonBlocking !== "boolean") {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'nonBlocking' must be a boolean, got ${String(options.nonBlocking)}`);
  }
}

export function cast(t: Tensor, dtype: DType): Tensor {
  t.assertLive("cast");
  const target = checkDType(dtype, "cast: dtype");
  if (target === t.dtype) return t.retain();
  return converted(t, target, t.device);
}

function checkOperand(fn: string, name: string, other: unknown): Tensor {
  if (!(other instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: '${name}' must be a Tensor`);
  if (other.disposed) throw disposedError(`${fn}: '${name}'`);
  return other;
}

export function copyFrom(t: Tensor, src: Tensor, options: CopyOptions = {}): void {
  t.assertLive("copyFrom");
  checkOperand("copyFrom", "src", src);
  checkCopyOptions("copyFrom", options);
  if (t.sharesMemoryWith(src)) {
    using staged = src.clone();
    native.run(COPY, "copyFrom", [t, staged], 0, undefined, copyNames);
    return;
  }
  native.run(COPY, "copyFrom", [t, src], options.nonBlocking === true ? COPY_NON_BLOCKING : 0, undefined, copyNames);
}

const fillValue = [0];

export function fill(t: Tensor, value: number): void {
  t.assertLive("fill");
  fillValue[0] = value;
  native.run(FILL, "fill", [t], 0, fillValue, fillNames);
}

export function addInPlace(t: Tensor, other: Tensor, alpha: number): void {
  t.assertLive("add_");
  checkOperand("add_", "other", other);
  if (other.device !== t.device) {
    throw new LLTMError("INVALID_DEVICE", `add_: 'other' is on ${other.device} but this tensor is on ${t.device}`);
  }
  if (t.sharesMemoryWith(other)) {
    using staged = other.clone();
    native.run(AXPY, "add_", [t, staged], 0, [alpha], axpyNames);
    return;
  }
  native.run(AXPY, "add_", [t, other], 0, [alpha], axpyNames);
}

export function toTypedArray(t: Tensor, raw: boolean): StorageArray {
  t.assertLive("toTypedArray");
  // The host array first: a view too large for one (an expand to 2^40) must fail before
  // a copy asks the allocator for its bytes, which a machine with overcommit grants and then kills.
  if (raw || !isHalf(t.dtype)) {
    const out = storageArray(t.dtype, t.numel);
    const source = t.isContiguous() ? t : t.clone();
    try {
      native.read("toTypedArray", out, source);
      return out;
    } finally {
      if (source !== t) source.dispose();
    }
  }
  const out = valueArray(t.dtype, t.numel);
  using values = converted(t, valueDType(t.dtype), t.device);
  native.read("toTypedArray", out, values);
  return out;
}

export function toArray(t: Tensor): NestedArray {
  const flat = t.toTypedArray();
  let i = 0;
  const build = (d: number): NestedArray => {
    if (d === t.shape.length - 1) {
      const row = Array.from(flat.subarray(i, i + t.shape[d]!));
      i += t.shape[d]!;
      return row;
    }
    return Array.from({ length: t.shape[d]! }, () => build(d + 1));
  };
  return build(0);
}
