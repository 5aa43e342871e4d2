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
import { mean, sum } from "./sum.ts";
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
  const { loss, diff } = mseLossKeepingDiff(a, b, options);
  diff.dispose();
  return loss;
}

/** mseLoss, and the difference a - b it squared, which its backward reads (the tape keeps it instead of recomputing it). */
export function mseLossKeepingDiff(a: Tensor, b: Tensor, options: { reduction?: Reduction } = {}): { loss: Tensor; diff: Tensor } {
  const fn = "mseLoss";
  checkCommon(fn, ["a", "b"], [a, b]);
  const reduction = checkReduction(fn, options.reduction ?? "mean");
  checkSameShape(fn, a, b);
  const diff = sub(a, b);
  try {
    const squares = mul(diff, diff);
    if (reduction === "none") return { loss: squares, diff };
    using owned = squares;
    return { loss: reduction === "mean" ? mean(owned) : sum(owned), diff };
  } catch (e) {
    diff.dispose();
    throw e;
  }
}

/** The gradient of mseLoss with respect to a from gradLoss (its output's shape); that for b is its negation. */
export function mseLossBackward(gradLoss: Tensor, a: Tensor, b: Tensor, options: { reduction?: Reduction } = {}): Tensor {
  const fn = "mseLossBackward";
  checkCommon(fn, ["gradLoss", "a", "b"], [gradLoss, a, b]);
  const reduction = checkReduction(fn, options.reduction ?? "mean");
  checkSameShape(fn, a, b);
  using diff = sub(a, b);
  return mseLossBackwardFromDiff(gradLoss, diff, reduction);
}

/**
 * d_a = diff times 2·gradLoss (/ numel for the mean): the factor formed on gradLoss's one element (or, for "none",
 * its every element) and multiplied in as a broadcast view, two launches.
 */
export function mseLossBackwardFromDiff(gradLoss: Tensor, diff: Tensor, reduction: Reduction): Tensor {
  using factor = scale(gradLoss, reduction === "mean" ? 2 / diff.numel : 2);
  if (reduction === "none") return mul(diff, factor);
  using spread = factor.expand(diff.shape);
  return mul(diff, spread);
}
