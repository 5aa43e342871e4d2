/**
 * The LLTM on the tape: one step (lltmCell, ops/lltm.ts) and a whole sequence
 * in one native call each way (lltmSequence, ops/sequence.ts), recorded when
 * an input requires gradients. Their backward adds the weights' and bias'
 * gradients straight into their .grad when both are leaves (the library's
 * ACC slots), else returns them.
 */
import { lltmBackward, lltmBackwardAccumulate, type LLTMForwardResult, lltmForward } from "../../ops/lltm.ts";
import { backwardInto, lltmSequenceBackward, lltmSequenceForward } from "../../ops/sequence.ts";
import { lltmStackedBackward, lltmStackedForward } from "../../ops/stacked.ts";
import { ALIGN_BYTES } from "../../optim/flat.ts";
import { contiguousStrides, Tensor } from "../../tensor/index.ts";
import { withGradMode } from "../grad_mode.ts";
import { type BackwardContext, Node } from "../node.ts";
import { needsRecording, record } from "../record.ts";

/** Per input, the gradient if it is needed; the others are disposed. */
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

/** One layer's parameters, as a stacked call takes them. */
export interface LayerParameters {
  weights: Tensor;
  bias: Tensor;
}

/**
 * The alignment (in elements) with which the parts (weights then bias, layer after layer) lie in one storage as
 * the stacked ops read them: consecutive, each at a multiple of `align` (default: ALIGN_BYTES of their dtype, a
 * fused optimizer's buffer) from the first; undefined where they do not.
 */
function flatAlign(parts: readonly Tensor[], align = ALIGN_BYTES / parts[0]!.itemSize): number | undefined {
  const first = parts[0]!;
  let at = first.offset;
  for (const p of parts) {
    if (p.storage !== first.storage || p.dtype !== first.dtype || !p.isContiguous() || p.offset !== at) return undefined;
    at = Math.ceil((at + p.numel - first.offset) / align) * align + first.offset;
  }
  return align;
}

/** The parts as one flat view from the first's element to the last's (they lie as flatAlign says). */
function flatView(parts: readonly Tensor[]): Tensor {
  const first = parts[0]!, last = parts[parts.length - 1]!;
  return first.viewWith([last.offset + last.numel - first.offset], [1], first.offset);
}

/** Whether the layers' parameters lie as the stacked ops read them in place (a fused optimizer's buffer holds them). */
export function layersLieFlat(layers: readonly LayerParameters[]): boolean {
  return flatAlign(layers.flatMap((l) => [l.weights, l.bias])) !== undefined;
}

/** The parts copied into a new flat tensor, packed (align 1). */
function flatCopy(parts: readonly Tensor[]): Tensor {
  const total = parts.reduce((n, p) => n + p.numel, 0);
  const flat = Tensor.empty([total], { dtype: parts[0]!.dtype, device: parts[0]!.device });
  let at = 0;
  for (const p of parts) {
    using into = flat.narrow(0, at, p.numel);
    using from = p.reshape([p.numel]);
    into.copyFrom(from);
    at += p.numel;
  }
  return flat;
}

/** Views of a flat tensor's parts of these shapes, laid out with `align`. */
function partViews(flat: Tensor, shapes: readonly (readonly number[])[], align: number): Tensor[] {
  let at = 0;
  return shapes.map((shape) => {
    const view = flat.viewWith(shape, contiguousStrides(shape), flat.offset + at);
    at = Math.ceil((at + shape.reduce((a, b) => a * b, 1)) / align) * align;
    return view;
  });
}

/** What a stacked call's backward needs of its forward. */
interface StackedSaved {
  reserve: Tensor;
  inputs: Tensor;
  params: Tensor;
  h0: Tensor;
  lengths: Tensor | undefined;
  align: number;
  bidirectional: boolean;
  /** Each part's shape (weights, bias, layer after layer, direction after direction), in params' order. */
  shapes: readonly (readonly number[])[];
}

class StackedNode extends Node {
  private saved: StackedSaved | undefined;

  constructor(saved: StackedSaved) {
    super("lltmStacked");
    this.saved = { ...saved, inputs: saved.inputs.retain(), params: saved.params.retain(), h0: saved.h0.retain(), lengths: saved.lengths?.retain() };
  }

  /** Inputs: the sequence, each part (weights, bias) in params' order, h0, c0. */
  backward(grads: readonly (Tensor | undefined)[], ctx: BackwardContext): (Tensor | undefined)[] {
    const { reserve, inputs, params, align, h0, lengths, shapes, bidirectional } = this.saved!;
    const parts = shapes.length;
    const [gOut, gH, gC] = grads;
    const paramInputs = Array.from({ length: parts }, (_, k) => k + 1);
    // The leaves' gradients, where they lie as params does (a fused optimizer's flat gradient): added into in place.
    const into = paramInputs.every((i) => this.needs(i)) ? paramInputs.map((i) => ctx.accumulator(i)) : [];
    const accumulate = into.length === parts && into.every((t) => t !== undefined) && flatAlign(into as Tensor[], align) === align;
    using target = accumulate ? flatView(into as Tensor[]) : undefined;
    const g = lltmStackedBackward(gOut, gH, gC, reserve, inputs, params, h0, {
      lengths, align, bidirectional, inputsGradient: this.needs(0), dParams: target,
    });
    // Added into the leaves, or handed back as views of d_params (which keep its memory).
    const paramGrads = g.dParams === undefined ? paramInputs.map(() => undefined) : partViews(g.dParams, shapes, align);
    g.dParams?.dispose();
    return keep(this, [g.dInputs, ...paramGrads, g.dH0, g.dC0]);
  }

  protected releaseSaved(): void {
    const s = this.saved;
    if (s === undefined) return;
    this.saved = undefined;
    for (const t of [s.reserve, s.inputs, s.params, s.h0]) t.dispose();
    s.lengths?.dispose();
  }
}

export interface StackedCallOptions {
  /** Each sample's number of steps: int32 [B] on the inputs' device. */
  lengths?: Tensor;
  /** Two directions: `layers` then lists the first direction's layers, then the second's (default false). */
  bidirectional?: boolean;
}

/**
 * L LLTM layers in D directions over a whole sequence in one native call each way: inputs [T, B, F], each layer's
 * weights [3S, S+F_l] and bias [3S] (direction after direction), h0 and c0 [L·D, B, S] -> the last layer's every
 * step [T, B, D·S] and each layer's last state [L·D, B, S], on the tape. Where the parameters lie in one storage
 * as a fused optimizer lays them out, the call reads them, and adds their gradients into their .grad, in place;
 * else through a packed copy.
 */
export function lltmStacked(
  inputs: Tensor, layers: readonly LayerParameters[], h0: Tensor, c0: Tensor, options: StackedCallOptions = {},
): SequenceOutputs {
  const { lengths, bidirectional = false } = options;
  const parts = layers.flatMap((l) => [l.weights, l.bias]);
  const args = [inputs, ...parts, h0, c0];
  const training = needsRecording(args);
  const inPlace = flatAlign(parts);
  const params = inPlace !== undefined ? flatView(parts) : withGradMode(false, () => flatCopy(parts));
  const align = inPlace ?? 1;
  try {
    const f = withGradMode(false, () => lltmStackedForward(inputs, params, h0, c0, { training, lengths, align, bidirectional }));
    const out = { output: f.outputs, h: f.lastH, c: f.lastCell };
    if (training) {
      const saved = { reserve: f.reserve!, inputs, params, h0, lengths, align, bidirectional, shapes: parts.map((p) => p.shape) };
      record(new StackedNode(saved), args, [out.output, out.h, out.c]);
    }
    return out;
  } finally {
    params.dispose();
  }
}
