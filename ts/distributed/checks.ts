/**
 * The checks every group makes before a collective touches anything: live,
 * contiguous tensors, one dtype and device per call, element counts that fit
 * the world size, a known reduction (mean only for float dtypes), a rank in range.
 */
import { isFloat } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import type { Tensor } from "../tensor/index.ts";
import type { ReduceOp } from "./group.ts";

export function checkTensor(fn: string, name: string, t: Tensor): void {
  t.assertLive(`${fn}: '${name}'`);
  if (!t.isContiguous()) {
    throw new LLTMError("INVALID_SHAPE", `${fn}: '${name}' must be contiguous (collectives send its memory as it lies; call contiguous())`);
  }
}

export function checkOp(fn: string, op: unknown, t: Tensor): ReduceOp {
  if (op !== "sum" && op !== "mean") {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'op' must be "sum" or "mean", got ${JSON.stringify(op)}`);
  }
  if (op === "mean" && !isFloat(t.dtype)) {
    throw new LLTMError("INVALID_DTYPE", `${fn}: 'op' "mean" needs a float tensor, got ${t.dtype} (use "sum")`);
  }
  return op;
}

export function checkRank(fn: string, name: string, rank: unknown, worldSize: number): number {
  if (typeof rank !== "number" || !Number.isInteger(rank) || rank < 0 || rank >= worldSize) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: '${name}' must be a rank in [0, ${worldSize}), got ${String(rank)}`);
  }
  return rank;
}

/** Checks a pair of tensors whose element counts relate as `bigName` = worldSize × `smallName`. */
export function checkPair(fn: string, big: [string, Tensor], small: [string, Tensor], worldSize: number): void {
  checkTensor(fn, big[0], big[1]);
  checkTensor(fn, small[0], small[1]);
  if (big[1].dtype !== small[1].dtype) {
    throw new LLTMError("INVALID_DTYPE", `${fn}: '${big[0]}' is ${big[1].dtype}, '${small[0]}' ${small[1].dtype}; they must match`);
  }
  if (big[1].device !== small[1].device) {
    throw new LLTMError("INVALID_DEVICE", `${fn}: '${big[0]}' is on ${big[1].device}, '${small[0]}' on ${small[1].device}; they must match`);
  }
  if (big[1].numel !== worldSize * small[1].numel) {
    throw new LLTMError(
      "SHAPE_MISMATCH",
      `${fn}: '${big[0]}' must hold worldSize (${worldSize}) × ${small[1].numel} = ${worldSize * small[1].numel} elements ` +
        `('${small[0]}' has ${small[1].numel}), it has ${big[1].numel}`,
    );
  }
  if (big[1].sharesMemoryWith(small[1]) && big[1] !== small[1]) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: '${big[0]}' and '${small[0]}' share memory`);
  }
}
