/**
 * unscaleCheck_: loss scaling's unscale and overflow check in one pass on
 * the tensor's device (the UNSCALE_CHECK op of csrc/lltm_ops.def), as
 * torch._amp_foreach_non_finite_check_and_unscale_: the gradient is scaled
 * by invScale in place and foundInf set to 1 where it held an infinity or a
 * NaN. Nothing is read back: one flag gathers the checks of every gradient,
 * and the host reads it once, when a step must decide.
 */
import { valueDType } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import * as native from "../native/index.ts";
import type { Tensor } from "../tensor/index.ts";
import { checkCommon } from "./lltm.ts";

const UNSCALE_CHECK = native.op("UNSCALE_CHECK");

/**
 * t *= invScale in place, and foundInf ([1], of t's compute type: float32, or
 * float64 for a float64 t) set to 1 where t held a non-finite element (left
 * as it is otherwise).
 */
export function unscaleCheck_(t: Tensor, foundInf: Tensor, invScale: number): void {
  const fn = "unscaleCheck_";
  checkCommon(fn, ["t", "foundInf"], [t, foundInf]);
  if (typeof invScale !== "number" || !Number.isFinite(invScale)) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'invScale' must be a finite number, got ${String(invScale)}`);
  }
  if (valueDType(t.dtype) === "int32") throw new LLTMError("INVALID_DTYPE", `${fn}: 't' has dtype int32, which is not a float type`);
  native.run(UNSCALE_CHECK, fn, [t, foundInf], 0, [invScale]);
}
