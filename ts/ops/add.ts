/**
 * add and sub, as torch.add and torch.sub: a + alpha * b elementwise (the
 * ADD op of csrc/lltm_ops.def), b of a's shape or broadcasting to it (a
 * scalar [1], a row). Their gradients are the incoming one, and alpha times
 * it, for b (summed over broadcast dimensions by the caller).
 */
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon } from "./lltm.ts";
import { broadcastTo, checkFloats, produce, resultDType } from "./produce.ts";

const ADD = native.op("ADD");

function addScaled(fn: string, a: Tensor, b: Tensor, alpha: number): Tensor {
  checkCommon(fn, ["a", "b"], [a, b]);
  checkFloats(fn, ["a", "b"], [a, b]);
  using wide = broadcastTo(fn, b, "b", a, "a");
  const out = Tensor.empty(a.shape, { dtype: resultDType(a, b), device: a.device });
  return produce(ADD, fn, [out, a, wide], out, [alpha]);
}

/** a + alpha * b. */
export function add(a: Tensor, b: Tensor, options: { alpha?: number } = {}): Tensor {
  return addScaled("add", a, b, options.alpha ?? 1);
}

/** a - alpha * b. */
export function sub(a: Tensor, b: Tensor, options: { alpha?: number } = {}): Tensor {
  return addScaled("sub", a, b, -(options.alpha ?? 1));
}
