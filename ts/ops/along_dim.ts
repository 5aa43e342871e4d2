/**
 * What the ops along one dimension share (cat, gather: the CAT and GATHER
 * ops of csrc/lltm_ops.def, which take [O, P, I] tensors): the `dim`
 * argument checked, and a shape split around it.
 */
import { LLTMError } from "../errors.ts";
import { numelOf } from "../tensor/shape.ts";

/** `dim` (negative counts from the end) checked against a tensor of `ndim` dimensions, as a non-negative one. */
export function checkedDim(fn: string, dim: number, ndim: number): number {
  if (!Number.isInteger(dim) || dim < -ndim || dim >= ndim) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'dim' must be an integer from ${-ndim} to ${ndim - 1}, got ${dim}`);
  }
  return dim < 0 ? dim + ndim : dim;
}

/** A shape as [before dim, at dim, after dim]: the [O, P, I] the ops along one dimension take. */
export function aroundDim(shape: readonly number[], dim: number): [number, number, number] {
  return [numelOf(shape.slice(0, dim)), shape[dim]!, numelOf(shape.slice(dim + 1))];
}
