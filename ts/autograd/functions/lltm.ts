/**
 * The LLTM on the tape: one step (lltmCell, ops/lltm.ts) and a whole sequence
 * in one native call each way (lltmSequence, ops/sequence.ts), recorded when
 * an input requires gradients. Their backward adds the weights' and bias'
 * gradients straight into their .grad when both are leaves (the library's
 * ACC slots), else returns them.
 */
import { lltmBackward, lltmBackwardAccumulate, type LLTMForwardResult, lltmForward } from "../../ops/lltm.ts";
import { backwardInto, lltmSequenceBackward, lltmSequenceForward } from "../../ops/sequence.ts";
import { Tensor } from "../../tensor/index.ts";
import { withGradMode } from "../grad_mode.ts";
import { type BackwardContext, Node } from "../node.ts";
import { needsRecording, record } from "../record.ts";

/** Per input (input, weights, bias, h, c), the gradient if it is needed; the others are disposed. */
function keep(node: Node, grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
  return grads.map((g, i) => {
    if (g === undefined || node.needs(i)) return g;
    g.dispose();
    return undefined;
  });
}

/** Both parameter accumulators, or none (the library adds both or neither). */
function accumulators(node: Node, ctx: BackwardContext): { dWeights: Tensor; dBias: Tensor } | undefined {
  if (!node.needs(1) || !node.needs(2)) return undefined;
  const dWeights = ctx.accumulator(1), dBias = ctx.accumulator(2);
  return dWeights !== undefined && dBias !== undefined ? { dWeights, dBias } : undefined;
}

function zerosLike(t: Tensor): Tensor {
  return Tensor.zeros(t.shape, { dtype: t.dtype, device: t.device });
}

class CellNode extends Node {
  private saved: { f: LLTMForwardResult; weights: Tensor } | undefined;

  constructor(f: LLTMForwardResult, weights: Tensor) {
    super("lltmCell");
    this.saved = { f, weights: weights.retain() };
  }

  /**
   * grads: those of h and c, and of a one-step sequence's output (h viewed as [1, B, S]) where the node
   * has that third output; the kernel adds the last to h's.
   */
  backward(grads: readonly (Tensor | undefined)[], ctx: BackwardContext): (Tensor | undefined)[] {
    const { f, weights } = this.saved!;
    using fromOutput = grads[2]?.reshape(f.newH.shape);
    const fromH = grads[0];
    using zeroH = fromH ?? fromOutput ? undefined : zerosLike(f.newH);
    using zeroCell = grads[1] ? undefined : zerosLike(f.newCell);
    const gh = (fromH ?? fromOutput ?? zeroH)!, gc = (grads[1] ?? zeroCell)!;
    const options = { gradOutput: fromH ? fromOutput : undefined };
    const saved = [f.newCell, f.inputGate, f.outputGate, f.candidateCell, f.X, f.gateWeights, weights] as const;
    const into = accumulators(this, ctx);
    if (into !== undefined) {
      const g = lltmBackwardAccumulate(gh, gc, ...saved, into.dWeights, into.dBias, options);
      return keep(this, [g.dInput, undefined, undefined, g.dOldH, g.dOldCell]);
    }
    const g = lltmBackward(gh, gc, ...saved, options);
    return keep(this, [g.dInput, g.dWeights, g.dBias, g.dOldH, g.dOldCell]);
  }

  protected releaseSaved(): void {
    const s = this.saved;
    if (s === undefined) return;
    this.saved = undefined;
    for (const t of [s.f.newH, s.f.newCell, s.f.inputGate, s.f.outputGate, s.f.candidateCell, s.f.X, s.f.gateWeights, s.weights]) {
      t.dispose();
    }
  }
}

/** One LLTM step: input [B, F], weights [3S, S+F], bias [3S], h and c [B, S] -> the new h and c [B, S]. */
export function lltmCell(input: Tensor, weights: Tensor, bias: Tensor, h: Tensor, c: Tensor): { h: Tensor; c: Tensor } {
  return cellStep(input, weights, bias, h, c, undefined);
}

/**
 * lltmCell, and where `outputShape` is given, h viewed in that shape as a third output of the same node
 * (a one-step sequence's output), so that its gradient and h's meet in one backward launch.
 */
function cellStep(
  input: Tensor, weights: Tensor, bias: Tensor, h: Tensor, c: Tensor, outputShape: readonly number[] | undefined,
): { h: Tensor; c: Tensor; output?: Tensor } {
  const inputs = [input, weights, bias, h, c];
  const recording = needsRecording(inputs);
  const f = withGradMode(false, () => lltmForward(input, weights, bias, h, c));
  const newH = f.newH.retain(), newCell = f.newCell.retain();
  const output = outputShape && withGradMode(false, () => newH.reshape(outputShape));
  if (!recording) {
    f.dispose();
    return { h: newH, c: newCell, output };
  }
  record(new CellNode(f, weights), inputs, output ? [newH, newCell, output] : [newH, newCell]);
  return { h: newH, c: newCell, output };
}

class SequenceNode extends Node {
  private saved: { reserve: Tensor; inputs: Tensor; weights: Tensor; h0: Tensor; lengths: Tensor | undefined } | undefined;

  constructor(reserve: Tensor, inputs: Tensor, weights: Tensor, h0: Tensor, lengths: Tensor | undefined) {
    super("lltmSequence");
    this.saved = { reserve, inputs: inputs.retain(), weights: weights.retain(), h0: h0.retain(), lengths: lengths?.retain() };
  }

  backward(grads: readonly (Tensor | undefined)[], ctx: BackwardContext): (Tensor | undefined)[] {
    const { reserve, inputs, weights, h0, lengths } = this.saved!;
    const [gOut, gH, gC] = grads;
    const into = accumulators(this, ctx);
    if (into !== undefined) {
      const g = backwardInto("lltmSequenceBackwardAccumulate", [gOut, gH, gC], reserve, inputs, weights, h0, into.dWeights, into.dBias, lengths, this.needs(0));
      return keep(this, [g.dInputs, undefined, undefined, g.dH0, g.dC0]);
    }
    const g = lltmSequenceBackward(gOut, gH, gC, reserve, inputs, weights, h0, { lengths });
    return keep(this, [g.dInputs, g.dWeights, g.dBias, g.dH0, g.dC0]);
  }

  protected releaseSaved(): void {
    const s = this.saved;
    if (s === undefined) return;
    this.saved = undefined;
    for (const t of [s.reserve, s.inputs, s.weights, s.h0]) t.dispose();
    s.lengths?.dispose();
  }
}

/** The outputs of lltmSequence: every step's h [T, B, S] and the last state [B, S]. */
export interface SequenceOutputs {
  output: Tensor;
  h: Tensor;
  c: Tensor;
}

/**
 * T LLTM steps in one native call: inputs [T, B, F] (any strides), weights [3S, S+F], bias [3S], h0 and c0
 * [B, S], and optionally each sample's length (int32 [B], 1 to T: zero outputs past it, the last state at it).
 * Keeps the reserve for backward only when it records itself. A single step without lengths (a sampling
 * loop's call) runs as the cell does, one native call each way; see oneStepSequence.
 */
export function lltmSequence(
  inputs: Tensor, weights: Tensor, bias: Tensor, h0: Tensor, c0: Tensor, lengths?: Tensor,
): SequenceOutputs {
  if (lengths === undefined && isOneStep(inputs, weights, bias, h0, c0)) return oneStepSequence(inputs, weights, bias, h0, c0);
  const args = [inputs, weights, bias, h0, c0];
  const training = needsRecording(args);
  const f = withGradMode(false, () => lltmSequenceForward(inputs, weights, bias, h0, c0, { training, lengths }));
  const out = { output: f.outputs, h: f.lastH, c: f.lastCell };
  if (training) record(new SequenceNode(f.reserve!, inputs, weights, h0, lengths), args, [out.output, out.h, out.c]);
  return out;
}

/**
 * Whether the call is one valid step: live tensors of one dtype and device with the sequence's shapes and T = 1.
 * Anything else goes to the sequence op, whose refusals name its arguments.
 */
export function isOneStep(inputs: Tensor, weights: Tensor, bias: Tensor, h0: Tensor, c0: Tensor): boolean {
  const all = [inputs, weights, bias, h0, c0];
  if (all.some((t) => !(t instanceof Tensor) || t.disposed || t.dtype !== inputs.dtype || !t.device.equals(inputs.device))) return false;
  if (inputs.ndim !== 3 || inputs.shape[0] !== 1 || h0.ndim !== 2 || c0.ndim !== 2 || weights.ndim !== 2 || bias.ndim !== 1) {
    return false;
  }
  const [, B, F] = inputs.shape as [number, number, number];
  const S = h0.shape[1]!;
  return h0.shape[0] === B && c0.shape[0] === B && c0.shape[1] === S && weights.shape[0] === 3 * S &&
    weights.shape[1] === S + F && bias.shape[0] === 3 * S;
}

/**
 * A one-step sequence as the cell: the step's kernels (on CUDA one launch each way, where the sequence engine
 * runs a product, its recurrence, and in the backward its products), with the same results up to rounding.
 * The output is h viewed as [1, B, S], a third output of the step's node, so gradients on either reach it.
 */
function oneStepSequence(inputs: Tensor, weights: Tensor, bias: Tensor, h0: Tensor, c0: Tensor): SequenceOutputs {
  const [, B, F] = inputs.shape as [number, number, number];
  using x = inputs.reshape([B, F]);
  const step = cellStep(x, weights, bias, h0, c0, [1, B, h0.shape[1]!]);
  return { output: step.output!, h: step.h, c: step.c };
}
