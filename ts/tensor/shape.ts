/** Shapes, strides and sizes of tensors, and the checks of user-given shapes. */
import { type DType, itemSize } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import { MAX_DIMS } from "../native/constants.ts";

export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d]!;
  }
  return strides;
}

export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function numelOf(shape: readonly number[]): number {
  let n = 1;
  for (const s of shape) n *= s;
  return n;
}

/** The bytes of a contiguous tensor of `shape`, refused by name when they are beyond what can be allocated. */
export function byteCount(shape: readonly number[], dtype: DType): number {
  const n = numelOf(shape);
  if (n * itemSize(dtype) > Number.MAX_SAFE_INTEGER) throw tooLarge(`shape [${shape.join(", ")}]`, n, dtype);
  return n * itemSize(dtype);
}

export function tooLarge(what: string, elements: number, dtype: DType): LLTMError {
  return new LLTMError(
    "INVALID_ARGUMENT",
    `${what} holds ${elements} ${dtype} elements: ${elements * itemSize(dtype)} bytes, more than the ` +
      `${Number.MAX_SAFE_INTEGER} bytes a tensor can have`,
  );
}

/** A copy of a user-given shape: 1 to MAX_DIMS positive integer sizes. */
export function checkShape(shape: readonly number[], what: string): number[] {
  if (!Array.isArray(shape) || shape.length < 1 || shape.length > MAX_DIMS) {
    throw new LLTMError("INVALID_ARGUMENT", `${what} must have 1 to ${MAX_DIMS} dimensions, got ${JSON.stringify(shape)}`);
  }
  for (const s of shape) {
    if (!Number.isSafeInteger(s) || s < 1) {
      throw new LLTMError("INVALID_ARGUMENT", `${what} must hold positive integer sizes, got [${shape.join(", ")}]`);
    }
  }
  return [...shape];
}
