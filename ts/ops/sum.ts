/**
 * sum and mean of every element, to a 1-element tensor [1] (the SUM op of
 * csrc/lltm_ops.def, summed in double); and their backward, the incoming
 * gradient [1] spread over x's shape (times 1/numel for the mean).
 */
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon } from "./lltm.ts";
import { produce } from "./produce.ts";

const SUM = native.op("SUM"), SCALE = native.op("SCALE");

function reduce(fn: string, x: Tensor, scale: number): Tensor {
  checkCommon(fn, ["x"], [x]);
  const total = Tensor.empty([1], { dtype: x.dtype, device: x.device });
  return produce(SUM, fn, [x, total], total, [scale]);
}

/** The sum of x's elements, [1]. */
export function sum(x: Tensor): Tensor {
  return reduce("sum", x, 1);
}

/** The mean of x's elements, [1]. */
export function mean(x: Tensor): Tensor {
  return reduce("mean", x, 1 / x.numel);
}

/** The gradient of sum(x) (or, with `mean`, of mean(x)) for x of `shape` from gradOut [1]. */
export function sumBackward(gradOut: Tensor, shape: readonly number[], options: { mean?: boolean } = {}): Tensor {
  const fn = options.mean === true ? "meanBackward" : "sumBackward";
  checkCommon(fn, ["gradOut"], [gradOut]);
  using one = gradOut.reshape([1]);
  using spread = one.expand(shape);
  const out = Tensor.empty(shape, { dtype: gradOut.dtype, device: gradOut.device });
  const n = out.numel;
  return produce(SCALE, fn, [out, spread], out, [options.mean === true ? 1 / n : 1], 0, { x: "'gradOut'" });
}
