/**
 * crossEntropy, as torch.nn.functional.cross_entropy with class targets
 * (the CROSS_ENTROPY op of csrc/lltm_ops.def, the log-softmax fused and
 * stable: each row's maximum subtracted first): logits [..., V], int32
 * targets [...]; a target equal to ignoreIndex adds nothing and is not
 * counted by the mean. Its backward (CROSS_ENTROPY_BACKWARD):
 * d_logits = (softmax - onehot(target)) times the loss's gradient.
 */
import { LLTMError } from "../errors.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon } from "./lltm.ts";
import { produce } from "./produce.ts";
import { rows, unflatten, unflattenRows } from "./rows.ts";

const CROSS_ENTROPY = native.op("CROSS_ENTROPY"), BACKWARD = native.op("CROSS_ENTROPY_BACKWARD");

export type Reduction = "mean" | "sum" | "none";
const reductions: Record<Reduction, number> = { none: 0, mean: 1, sum: 2 };

export interface CrossEntropyOptions {
  /** "mean" (default: over the rows not ignored), "sum", or "none" (one loss per row, of targets' shape). */
  reduction?: Reduction;
  /** A target value whose rows add nothing (default -100, as PyTorch's). */
  ignoreIndex?: number;
}

/** The op's scalars [reduction, ignore_index] from the options, checked. */
export function lossScalars(fn: string, options: CrossEntropyOptions): [number, number] {
  const reduction = options.reduction ?? "mean";
  if (!Object.hasOwn(reductions, reduction)) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'reduction' must be "mean", "sum" or "none", got ${JSON.stringify(reduction)}`);
  }
  const ignore = options.ignoreIndex ?? -100;
  if (!Number.isInteger(ignore) || ignore < -(2 ** 31) || ignore >= 2 ** 31) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'ignoreIndex' must be an int32 integer, got ${ignore}`);
  }
  return [reductions[reduction], ignore];
}

/** targets of any shape as the [N] the op takes. */
function flat(targets: Tensor): Tensor {
  return targets.ndim === 1 ? targets.retain() : targets.reshape([targets.numel]);
}

/** The loss of logits [..., V] against int32 targets [...]: [1] for "mean" and "sum", targets' shape for "none". */
export function crossEntropy(logits: Tensor, targets: Tensor, options: CrossEntropyOptions = {}): Tensor {
  const fn = "crossEntropy";
  checkCommon(fn, ["logits", "targets"], [logits, targets]);
  const scalars = lossScalars(fn, options);
  using l2 = rows(logits);
  using t1 = flat(targets);
  const perRow = scalars[0] === 0;
  const out = Tensor.empty(perRow ? [l2.shape[0]!] : [1], { dtype: logits.dtype, device: logits.device });
  produce(CROSS_ENTROPY, fn, perRow ? [l2, t1, out, undefined] : [l2, t1, undefined, out], out, scalars);
  return perRow ? unflattenRows(out, logits.shape) : out;
}

/**
 * The gradient of crossEntropy with respect to logits, from gradLoss (of the
 * loss's shape: [1], or targets' shape for "none"), the same logits, targets and options.
 */
export function crossEntropyBackward(
  gradLoss: Tensor, logits: Tensor, targets: Tensor, options: CrossEntropyOptions = {},
): Tensor {
  const fn = "crossEntropyBackward";
  checkCommon(fn, ["gradLoss", "logits", "targets"], [gradLoss, logits, targets]);
  const scalars = lossScalars(fn, options);
  using l2 = rows(logits);
  using t1 = flat(targets);
  using g1 = flat(gradLoss);
  const perRow = scalars[0] === 0;
  const d = Tensor.empty(l2.shape, { dtype: logits.dtype, device: logits.device });
  const renamed = { grad_losses: "'gradLoss'", grad_total: "'gradLoss'" };
  produce(BACKWARD, fn, perRow ? [l2, t1, g1, undefined, d] : [l2, t1, undefined, g1, d], d, scalars, 0, renamed);
  return unflatten(d, logits.shape);
}
