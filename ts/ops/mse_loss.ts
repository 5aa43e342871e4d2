/**
 * mseLoss, as torch.nn.functional.mse_loss: the squared differences of a
 * and b (equal shapes), their mean ("mean", default), sum ("sum"), or each
 * ("none"); composed of the table's ADD, MUL and SUM ops. Its backward:
 * d_a = 2 (a - b) times the loss's gradient (/ numel for the mean), d_b = -d_a.
 */
import { LLTMError } from "../errors.ts";
import type { Tensor } from "../tensor/index.ts";
import { sub } from "./add.ts";
import { checkCommon } from "./lltm.ts";
import { mul } from "./mul.ts";
import { scale } from "./scale.ts";
import { mean, sum, sumBackward } from "./sum.ts";
import type { Reduction } from "./cross_entropy.ts";

function checkReduction(fn: string, reduction: unknown): Reduction {
  if (reduction !== "mean" && reduction !== "sum" && reduction !== "none") {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'reduction' must be "mean", "sum" or "none", got ${JSON.stringify(reduction)}`);
  }
  return reduction;
}

function checkSameShape(fn: string, a: Tensor, b: Tensor): void {
  if (a.ndim !== b.ndim || a.shape.some((n, i) => n !== b.shape[i])) {
    throw new LLTMError("SHAPE_MISMATCH", `${fn}: 'b' has shape [${b.shape.join(", ")}] but 'a' has [${a.shape.join(", ")}]`);
  }
}

/** The mean squared error of a against b: [1] for "mean" and "sum", a's shape for "none". */
export function mseLoss(a: Tensor, b: Tensor, options: { reduction?: Reduction } = {}): Tensor {
  const fn = "mseLoss";
  checkCommon(fn, ["a", "b"], [a, b]);
  const reduction = checkReduction(fn, options.reduction ?? "mean");
  checkSameShape(fn, a, b);
  using diff = sub(a, b);
  const squares = mul(diff, diff);
  if (reduction === "none") return squares;
  using owned = squares;
  return reduction === "mean" ? mean(owned) : sum(owned);
}

/** The gradient of mseLoss with respect to a from gradLoss (its output's shape); that for b is its negation. */
export function mseLossBackward(gradLoss: Tensor, a: Tensor, b: Tensor, options: { reduction?: Reduction } = {}): Tensor {
  const fn = "mseLossBackward";
  checkCommon(fn, ["gradLoss", "a", "b"], [gradLoss, a, b]);
  const reduction = checkReduction(fn, options.reduction ?? "mean");
  checkSameShape(fn, a, b);
  using diff = sub(a, b);
  using twice = scale(diff, 2);
  if (reduction === "none") return mul(twice, gradLoss);
  using spread = sumBackward(gradLoss, a.shape, { mean: reduction === "mean" });
  return mul(twice, spread);
}
