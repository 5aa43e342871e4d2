/**
 * The LLTM op on native kernels (the FORWARD and BACKWARD ops of
 * csrc/lltm_ops.def): lltmForward and lltmBackward take and return exactly
 * the tutorial's tensors. Here only what the library cannot see is checked
 * (live Tensors on one device); the library checks every shape, stride and
 * dtype (float32, bfloat16 and float16 may be mixed, float64 only with
 * float64) before any kernel runs, and its messages come back with these
 * functions' argument names.
 */
import { LLTMError } from "../errors.ts";
import { ACCUMULATE_PARAM_GRADS } from "../native/constants.ts";
import * as native from "../native/index.ts";
import { disposedError, Tensor } from "../tensor/index.ts";
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
 * Checks that every tensor is live and on the first one's device; `names[i]`
 * names `tensors[i]` in messages. (Two parallel arrays, not pairs: this runs
 * on every call.)
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

/** Runs `o` on `ins` then `out` (its slots in order), with `flags`; frees `out` if it fails. */
export function runInto(o: native.Op, fn: string, ins: readonly (Tensor | undefined)[], out: readonly Tensor[], flags = 0): void {
  try {
    native.runInto(o, fn, ins, out, flags);
  } catch (e) {
    disposeAll(out);
    throw e;
  }
}

/** Runs `o` on `all` (its slots in order, `out` among them), with `flags`; frees `out` if it fails. */
function runAll(o: native.Op, fn: string, all: readonly (Tensor | undefined)[], out: readonly Tensor[], flags = 0): void {
  try {
    native.run(o, fn, all, flags);
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

const FORWARD = native.op("FORWARD"), BACKWARD = native.op("BACKWARD");
const forwardOutputs = new Outputs(
  FORWARD, ["new_h", "new_cell", "input_gate", "output_gate", "candidate_cell", "X", "gate_weights"],
  { new_h: "old_h", new_cell: "old_cell" },
);
const parameterGradients = { d_weights: "weights", d_bias: "weights", d_old_cell: "grad_cell" };
const backwardOutputs = new Outputs(BACKWARD, ["d_old_h", "d_input", "d_weights", "d_bias", "d_old_cell"], parameterGradients);
const stateGradientOutputs = new Outputs(BACKWARD, ["d_old_h", "d_input", "d_old_cell"], parameterGradients);

/** One step of the cell: input [B,F], weights [3S,S+F], bias [3S], oldH and oldCell [B,S]. */
export function lltmForward(input: Tensor, weights: Tensor, bias: Tensor, oldH: Tensor, oldCell: Tensor): LLTMForwardResult {
  const ins = [input, weights, bias, oldH, oldCell];
  checkCommon("lltmForward", FORWARD_ARGS, ins);
  const out = forwardOutputs.allocate(ins, input.device);
  runInto(FORWARD, "lltmForward", ins, out);
  return new ForwardResult(out);
}

export interface LLTMBackwardOptions {
  /**
   * A second gradient of newH [B, S], added to gradH inside the kernel: where the step's h is also a
   * one-step sequence's output, its two gradients need no sum of their own first.
   */
  gradOutput?: Tensor;
}

/** Checks options.gradOutput as checkCommon checks the other arguments (beside gradH). */
function checkGradOutput(fn: string, gradH: Tensor, options: LLTMBackwardOptions): Tensor | undefined {
  const g = options.gradOutput;
  if (g !== undefined) checkCommon(fn, ["gradH", "gradOutput"], [gradH, g]);
  return g;
}

/**
 * Gradients of the step from gradH and gradCell (of newH and newCell) and what
 * lltmForward saved, in the tutorial's argument order.
 */
export function lltmBackward(
  gradH: Tensor, gradCell: Tensor, newCell: Tensor, inputGate: Tensor, outputGate: Tensor,
  candidateCell: Tensor, X: Tensor, gateWeights: Tensor, weights: Tensor, options: LLTMBackwardOptions = {},
): LLTMBackwardResult {
  const fn = "lltmBackward";
  const ins = [gradH, gradCell, newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights];
  checkCommon(fn, BACKWARD_ARGS, ins);
  const gradOutput = checkGradOutput(fn, gradH, options);
  const out = backwardOutputs.allocate(ins, gradH.device);
  if (gradOutput === undefined) runInto(BACKWARD, fn, ins, out);
  else runAll(BACKWARD, fn, [...ins, ...out, gradOutput], out);
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
  options: LLTMBackwardOptions = {},
): LLTMStateGradients {
  const fn = "lltmBackwardAccumulate";
  const args = [gradH, gradCell, newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights, dWeights, dBias];
  checkCommon(fn, ACCUMULATE_ARGS, args);
  const gradOutput = checkGradOutput(fn, gradH, options);
  const out = stateGradientOutputs.allocate(args.slice(0, 9), gradH.device);
  const all = [
    gradH, gradCell, newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights, out[0]!, out[1]!, dWeights, dBias, out[2]!,
    gradOutput,
  ];
  runAll(BACKWARD, fn, all, out, ACCUMULATE_PARAM_GRADS);
  return new StateGradients(out);
}
