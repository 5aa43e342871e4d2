/**
 * What the ops of this folder share beyond checkCommon: running an op into
 * tensors allocated here (freed if the op refuses), the dtype of a result
 * of two inputs, and an input broadcast to another's shape.
 */
import { type DType, isFloat } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import * as native from "../native/index.ts";
import type { Tensor } from "../tensor/index.ts";

/** Runs `o` on `tensors` (by slot, `out` among them) with `scalars` and `flags`; disposes `out` and rethrows if it fails. */
export function produce<T extends Tensor | readonly Tensor[]>(
  o: native.Op, fn: string, tensors: readonly (Tensor | undefined)[], out: T, scalars?: readonly number[], flags = 0,
  renamed?: native.ArgumentNames,
): T {
  try {
    native.run(o, fn, tensors, flags, scalars, renamed);
  } catch (e) {
    for (const t of Array.isArray(out) ? out : [out]) (t as Tensor).dispose();
    throw e;
  }
  return out;
}

/**
 * Refuses an int32 tensor among ops whose result is allocated here with an
 * input's dtype (before the library would blame that result, which the
 * caller never passed).
 */
export function checkFloats(fn: string, names: readonly string[], tensors: readonly Tensor[]): void {
  for (let i = 0; i < tensors.length; i++) {
    if (!isFloat(tensors[i]!.dtype)) {
      throw new LLTMError("INVALID_DTYPE", `${fn}: '${names[i]}' has dtype ${tensors[i]!.dtype}, which is not a float type`);
    }
  }
}

/** The dtype of a result of `a` and `b`: theirs when equal, else float32 (float32 and the half types computed together). */
export function resultDType(a: Tensor, b: Tensor): DType {
  return a.dtype === b.dtype ? a.dtype : "float32";
}

/**
 * `b` viewed with `a`'s shape: itself (a new reference) when the shapes are
 * equal, else an expanded view when b broadcasts to a's shape (a scalar, a
 * row), else an LLTMError naming both arguments.
 */
export function broadcastTo(fn: string, b: Tensor, bName: string, a: Tensor, aName: string): Tensor {
  const same = a.ndim === b.ndim && a.shape.every((n, i) => n === b.shape[i]);
  if (same) return b.retain();
  const lead = a.ndim - b.ndim;
  const fits = lead >= 0 && b.shape.every((n, i) => n === 1 || n === a.shape[lead + i]);
  if (!fits) {
    throw new LLTMError(
      "SHAPE_MISMATCH",
      `${fn}: '${bName}' has shape [${b.shape.join(", ")}], which neither equals nor broadcasts to '${aName}''s [${a.shape.join(", ")}]`,
    );
  }
  return b.expand(a.shape);
}
