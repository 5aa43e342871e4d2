/**
 * The LLTM op on native kernels: lltmForward and lltmBackward take and return
 * exactly the tutorial's tensors. Here only what the library cannot see is
 * checked (live Tensors, one dtype and one device); the library checks every
 * shape and stride before any kernel runs, and its messages come back with
 * these functions' argument names.
 */
import { LLTMError } from "../errors.ts";
import * as native from "../native/index.ts";
import { disposedError, Tensor } from "../tensor.ts";
import { Outputs } from "./outputs.ts";

export interface LLTMForwardResult extends Disposable {
  newH: Tensor;
  newCell: Tensor;
  inputGate: Tensor;
  outputGate: Tensor;
  candidateCell: Tensor;
  /** cat(old_h, input), [B, S+F] */
  X: Tensor;
  /** The gates before their activations, [B, 3S]. */
  gateWeights: Tensor;
  dispose(): void;
}

export interface LLTMBackwardResult extends Disposable {
  dOldH: Tensor;
  dInput: Tensor;
  dWeights: Tensor;
  dBias: Tensor;
  dOldCell: Tensor;
  dispose(): void;
}

const FORWARD_ARGS = ["input", "weights", "bias", "oldH", "oldCell"];
const BACKWARD_ARGS = [
  "gradH", "gradCell", "newCell", "inputGate", "outputGate", "candidateCell", "X", "gateWeights", "weights",
];
const ACCUMULATE_ARGS = [...BACKWARD_ARGS, "dWeights", "dBias"];

/**
 * Checks that every tensor is live and shares the first one's dtype and
 * device; `names[i]` names `tensors[i]` in messages. (Two parallel arrays,
 * not pairs: this runs on every call.)
 */
export function checkCommon(fn: string, names: readonly string[], tensors: readonly Tensor[]): void {
  for (let i = 0; i < tensors.length; i++) {
    const t = tensors[i];
    if (!(t instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: '${names[i]}' must be a Tensor`);
    if (t.disposed) throw disposedError(`${fn}: '${names[i]}'`);
  }
  const first = tensors[0]!;
  for (let i = 1; i < tensors.length; i++) {
    const t = tensors[i]!;
    if (t.dtype !== first.dtype) {
      throw new LLTMError("INVALID_DTYPE", `${fn}: '${names[i]}' has dtype ${t.dtype} but '${names[0]}' has ${first.dtype}`);
    }
    if (t.device !== first.device) {
      throw new LLTMError(
        "INVALID_DEVICE",
        `${fn}: '${names[i]}' is on ${t.device} but '${names[0]}' is on ${first.device}; move it with .to("${first.device}")`,
      );
    }
  }
}

export function disposeAll(tensors: readonly Tensor[]): void {
  for (let i = 0; i < tensors.length; i++) tensors[i]!.dispose();
}

/** Runs native call `call` of `args` into `out`, freeing `out` if it fails. */
export function run<A>(call: (args: A, out: readonly Tensor[]) => void, args: A, out: readonly Tensor[]): void {
  try {
    call(args, out);
  } catch (e) {
    disposeAll(out);
    throw e;
  }
}

/** Results of an op: the tensors it allocated, disposed together. */
abstract class ResultGroup {
  private readonly out: readonly Tensor[];

  constructor(out: readonly Tensor[]) {
    this.out = out;
  }

  dispose(): void {
    disposeAll(this.out);
  }

  [Symbol.dispose](): void {
    disposeAll(this.out);
  }
}

class ForwardResult extends ResultGroup implements LLTMForwardResult {
  readonly newH: Tensor;
  readonly newCell: Tensor;
  readonly inputGate: Tensor;
  readonly outputGate: Tensor;
  readonly candidateCell: Tensor;
  readonly X: Tensor;
  readonly gateWeights: Tensor;

  constructor(out: readonly Tensor[]) {
    super(out);
    this.newH = out[0]!;
    this.newCell = out[1]!;
    this.inputGate = out[2]!;
    this.outputGate = out[3]!;
    this.candidateCell = out[4]!;
    this.X = out[5]!;
    this.gateWeights = out[6]!;
  }
}

class BackwardResult extends ResultGroup implements LLTMBackwardResult {
  readonly dOldH: Tensor;
  readonly dInput: Tensor;
  readonly dWeights: Tensor;
  readonly dBias: Tensor;
  readonly dOldCell: Tensor;

  constructor(out: readonly Tensor[]) {
    super(out);
    this.dOldH = out[0]!;
    this.dInput = out[1]!;
    this.dWeights = out[2]!;
    this.dBias = out[3]!;
    this.dOldCell = out[4]!;
  }
}

class StateGradients extends ResultGroup implements LLTMStateGradients {
  readonly dOldH: Tensor;
  readonly dInput: Tensor;
  readonly dOldCell: Tensor;

  constructor(out: readonly Tensor[]) {
    super(out);
    this.dOldH = out[0]!;
    this.dInput = out[1]!;
    this.dOldCell = out[2]!;
  }
}

// Sized by the inputs without checking them: where a rank is wrong, a size of
// 1 stands in, and the library refuses the call (naming the argument) before
// anything is written.
const forwardOutputs = new Outputs((B, F, S) => [[B, S], [B, S], [B, S], [B, S], [B, S], [B, S + F], [B, 3 * S]]);
const backwardOutputs = new Outputs((B, F, S) => [[B, S], [B, F], [3 * S, S + F], [3 * S], [B, S]]);
const stateGradientOutputs = new Outputs((B, F, S) => [[B, S], [B, F], [B, S]]);

/** One step of the cell: input [B,F], weights [3S,S+F], bias [3S], oldH and oldCell [B,S]. */
export function lltmForward(input: Tensor, weights: Tensor, bias: Tensor, oldH: Tensor, oldCell: Tensor): LLTMForwardResult {
  const ins = [input, weights, bias, oldH, oldCell];
  checkCommon("lltmForward", FORWARD_ARGS, ins);
  const out = forwardOutputs.allocate(input.dtype, input.device, input.shape[0]!, input.shape[1] ?? 1, oldH.shape[1] ?? 1);
  run(forward, ins, out);
  return new ForwardResult(out);
}

/** F of a backward call, from X [B, S+F]. */
function backwardFeatures(X: Tensor, S: number): number {
  return Math.max(1, (X.shape[1] ?? 1) - S);
}

function forward(ins: readonly Tensor[], out: readonly Tensor[]): void {
  native.forward("lltmForward", ins, out);
}

function backward(ins: readonly Tensor[], out: readonly Tensor[]): void {
  native.backward("lltmBackward", ins, out, false);
}

function backwardAccumulate(args: readonly Tensor[], out: readonly Tensor[]): void {
  native.backward("lltmBackwardAccumulate", args, [out[0]!, out[1]!, args[9]!, args[10]!, out[2]!], true);
}

/**
 * Gradients of the step from gradH and gradCell (of newH and newCell) and what
 * lltmForward saved, in the tutorial's argument order.
 */
export function lltmBackward(
  gradH: Tensor, gradCell: Tensor, newCell: Tensor, inputGate: Tensor, outputGate: Tensor,
  candidateCell: Tensor, X: Tensor, gateWeights: Tensor, weights: Tensor,
): LLTMBackwardResult {
  const ins = [gradH, gradCell, newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights];
  checkCommon("lltmBackward", BACKWARD_ARGS, ins);
  const S = gradH.shape[1] ?? 1;
  const out = backwardOutputs.allocate(gradH.dtype, gradH.device, gradH.shape[0]!, backwardFeatures(X, S), S);
  run(backward, ins, out);
  return new BackwardResult(out);
}

export interface LLTMStateGradients extends Disposable {
  dOldH: Tensor;
  dInput: Tensor;
  dOldCell: Tensor;
  dispose(): void;
}

/**
 * lltmBackward that adds the weights' and bias' gradients to dWeights and
 * dBias (as autograd accumulates into .grad) and returns the others.
 * dWeights and dBias must not share memory with the other arguments or each
 * other (the library refuses it).
 */
export function lltmBackwardAccumulate(
  gradH: Tensor, gradCell: Tensor, newCell: Tensor, inputGate: Tensor, outputGate: Tensor,
  candidateCell: Tensor, X: Tensor, gateWeights: Tensor, weights: Tensor, dWeights: Tensor, dBias: Tensor,
): LLTMStateGradients {
  const fn = "lltmBackwardAccumulate";
  const args = [gradH, gradCell, newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights, dWeights, dBias];
  checkCommon(fn, ACCUMULATE_ARGS, args);
  const S = gradH.shape[1] ?? 1;
  const out = stateGradientOutputs.allocate(gradH.dtype, gradH.device, gradH.shape[0]!, backwardFeatures(X, S), S);
  run(backwardAccumulate, args, out);
  return new StateGradients(out);
}
