/**
 * The elementwise ops and reductions of ts/ops/ on the tape: add, sub, mul,
 * scale, sum, mean, softmax, cat and mseLoss, each recorded when an input
 * requires gradients, with its backward through the same library ops.
 */
import { LLTMError } from "../../errors.ts";
import { add as addOp, sub as subOp } from "../../ops/add.ts";
import { cat as catOp } from "../../ops/cat.ts";
import { mseLoss as mseLossOp, mseLossBackwardFromDiff, mseLossKeepingDiff } from "../../ops/mse_loss.ts";
import { mul as mulOp } from "../../ops/mul.ts";
import type { Reduction } from "../../ops/cross_entropy.ts";
import { scale as scaleOp } from "../../ops/scale.ts";
import { mean as meanOp, sum as sumOp, sumBackward } from "../../ops/sum.ts";
import { softmax as softmaxOp, softmaxBackward } from "../../ops/softmax.ts";
import { sameShape, type Tensor } from "../../tensor/index.ts";
import { withGradMode } from "../grad_mode.ts";
import { Node } from "../node.ts";
import { needsRecording, recordOne } from "../record.ts";

/** A node whose backward is a function of the output's gradient and what it keeps. */
class FunctionNode extends Node {
  private saved: Tensor[];
  private readonly map: (g: Tensor, saved: readonly Tensor[], needs: (i: number) => boolean) => (Tensor | undefined)[];

  constructor(name: string, saved: readonly Tensor[], map: FunctionNode["map"]) {
    super(name);
    this.saved = saved.map((t) => t.retain());
    this.map = map;
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    return this.map(grads[0]!, this.saved, (i) => this.needs(i));
  }

  protected releaseSaved(): void {
    for (const t of this.saved) t.dispose();
    this.saved = [];
  }
}

/**
 * Runs `forward` without recording, then, when an input requires gradients, records `map` as its backward
 * with what `save` picks (inputs, or the output) kept for it.
 */
function onTape(
  name: string, inputs: readonly Tensor[], save: (out: Tensor) => readonly Tensor[], forward: () => Tensor, map: FunctionNode["map"],
): Tensor {
  const out = withGradMode(false, forward);
  return needsRecording(inputs) ? recordOne(new FunctionNode(name, save(out), map), inputs, out) : out;
}

const nothing = (): readonly Tensor[] => [];

/** alpha·g, or g itself (a new reference) for alpha 1. */
function scaled(g: Tensor, alpha: number): Tensor {
  return alpha === 1 ? g.retain() : scaleOp(g, alpha);
}

/** The gradient of a b broadcast from `shape` into g's: g itself for the same shape, summed for one element. */
function unbroadcast(g: Tensor, shape: readonly number[], alpha: number): Tensor {
  if (sameShape(g.shape, shape)) return scaled(g, alpha);
  using total = sumOp(g);
  using s = scaled(total, alpha);
  return s.reshape(shape);
}

/** a + alpha·b by `forward` (add's or sub's own, for their messages), on the tape. */
function addScaled(fn: string, a: Tensor, b: Tensor, alpha: number, forward: () => Tensor): Tensor {
  if (b.requiresGrad && !sameShape(a.shape, b.shape) && b.numel !== 1 && needsRecording([b])) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: a broadcast 'b' that requires gradients must have one element (or a's shape)`);
  }
  const shape = b.shape;
  return onTape(fn, [a, b], nothing, forward, (g, _, needs) => [
    needs(0) ? g.retain() : undefined,
    needs(1) ? unbroadcast(g, shape, alpha) : undefined,
  ]);
}

/** a + alpha·b (b of a's shape, or broadcast to it), as torch.add. */
export function add(a: Tensor, b: Tensor, options: { alpha?: number } = {}): Tensor {
  const alpha = options.alpha ?? 1;
  return addScaled("add", a, b, alpha, () => addOp(a, b, options));
}

/** a − alpha·b, as torch.sub. */
export function sub(a: Tensor, b: Tensor, options: { alpha?: number } = {}): Tensor {
  const alpha = options.alpha ?? 1;
  return addScaled("sub", a, b, -alpha, () => subOp(a, b, options));
}

/** a·b elementwise (b of a's shape, or broadcast to it when it needs no gradient). */
export function mul(a: Tensor, b: Tensor): Tensor {
  if (!sameShape(a.shape, b.shape) && needsRecording([b]) && b.requiresGrad) {
    throw new LLTMError("INVALID_ARGUMENT", "mul: a broadcast 'b' that requires gradients is not supported; expand it to a's shape with a copy");
  }
  return onTape("mul", [a, b], () => [a, b], () => mulOp(a, b), (g, [x, y], needs) => [
    needs(0) ? mulOp(g, y!) : undefined,
    needs(1) ? mulOp(g, x!) : undefined,
  ]);
}

/** alpha·x. */
export function scale(x: Tensor, alpha: number): Tensor {
  return onTape("scale", [x], nothing, () => scaleOp(x, alpha), (g) => [scaleOp(g, alpha)]);
}

/** The sum of x's elements, [1]. */
export function sum(x: Tensor): Tensor {
  const shape = x.shape;
  return onTape("sum", [x], nothing, () => sumOp(x), (g) => [sumBackward(g, shape)]);
}

/** The mean of x's elements, [1]. */
export function mean(x: Tensor): Tensor {
  const shape = x.shape;
  return onTape("mean", [x], nothing, () => meanOp(x), (g) => [sumBackward(g, shape, { mean: true })]);
}

/** Softmax over the last dimension. */
export function softmax(x: Tensor): Tensor {
  return onTape("softmax", [x], (y) => [y], () => softmaxOp(x), (g, [y]) => [softmaxBackward(g, y!)]);
}

/** a and b joined along `dim` (default 0), as torch.cat of two tensors. */
export function cat(a: Tensor, b: Tensor, dim = 0): Tensor {
  const d = dim < 0 ? dim + a.ndim : dim;
  const first = a.shape[d]!, second = b.shape[d]!;
  return onTape("cat", [a, b], nothing, () => catOp(a, b, dim), (g, _, needs) => [
    needs(0) ? g.narrow(d, 0, first) : undefined,
    needs(1) ? g.narrow(d, first, second) : undefined,
  ]);
}

/** The mean (or sum, or per-element) squared error of a against b, as torch.nn.functional.mse_loss. */
export function mseLoss(a: Tensor, b: Tensor, options: { reduction?: Reduction } = {}): Tensor {
  if (!needsRecording([a, b])) return withGradMode(false, () => mseLossOp(a, b, options));
  const { loss, diff } = withGradMode(false, () => mseLossKeepingDiff(a, b, options));
  using kept = diff;
  const reduction = options.reduction ?? "mean";
  return recordOne(new FunctionNode("mseLoss", [kept], (g, [d], needs) => {
    const da = mseLossBackwardFromDiff(g, d!, reduction);
    if (!needs(1)) return [da, undefined];
    const db = scaleOp(da, -1);
    if (!needs(0)) {
      da.dispose();
      return [undefined, db];
    }
    return [da, db];
  }), [a, b], loss);
}
