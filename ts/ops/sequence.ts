/**
 * The LLTM over a whole sequence in one native call each way
 * (lltm_sequence_forward / lltm_sequence_backward): inputs [T, B, F] from the
 * state (h0, c0) [B, S] to every step's h [T, B, S] and the last state, and
 * backpropagation through time. A training forward returns the reserve, the
 * state its backward reads (an opaque tensor on the same device); an
 * inference forward ({ training: false }) keeps none. As for the step, only
 * what the library cannot see is checked here (live Tensors, one dtype, one
 * device); the library checks shapes and strides before anything runs.
 */
import { itemSize } from "../dtype.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor.ts";
import { checkCommon, disposeAll, run } from "./lltm.ts";
import { Outputs } from "./outputs.ts";

export interface LLTMSequenceForwardResult extends Disposable {
  /** Every step's h, [T, B, S]. */
  outputs: Tensor;
  /** The state after the last step, [B, S] each. */
  lastH: Tensor;
  lastCell: Tensor;
  /** What lltmSequenceBackward needs (training only): opaque, to be passed on unchanged. */
  reserve: Tensor | undefined;
  dispose(): void;
}

export interface LLTMSequenceBackwardResult extends Disposable {
  dInputs: Tensor;
  dWeights: Tensor;
  dBias: Tensor;
  dH0: Tensor;
  dC0: Tensor;
  dispose(): void;
}

export interface LLTMSequenceStateGradients extends Disposable {
  dInputs: Tensor;
  dH0: Tensor;
  dC0: Tensor;
  dispose(): void;
}

export interface SequenceForwardOptions {
  /** Keep the reserve for a backward pass (default true); false runs inference and keeps nothing. */
  training?: boolean;
}

const FORWARD_ARGS = ["inputs", "weights", "bias", "h0", "c0"];

const forwardOutputs = new Outputs((T, B, _F, S) => [[T, B, S], [B, S], [B, S]]);
// The reserve is an allocation of its own, so that it can be freed after backward while the outputs live on.
const reserveOutput = new Outputs((_T, _B, _F, _S, elements) => [[elements]]);
const backwardOutputs = new Outputs((T, B, F, S) => [[T, B, F], [3 * S, S + F], [3 * S], [B, S], [B, S]]);
const stateGradientOutputs = new Outputs((T, B, F, S) => [[T, B, F], [B, S], [B, S]]);

/*
 * The outputs' sizes are read from the inputs without checking them: where
 * a rank is wrong, a size of 1 stands in, and the library refuses the call
 * (naming the argument) before anything is written.
 */
function sizes(inputs: Tensor, h0: Tensor): { T: number; B: number; F: number; S: number } {
  return { T: inputs.shape[0]!, B: inputs.shape[1] ?? 1, F: inputs.shape[2] ?? 1, S: h0.shape[1] ?? 1 };
}

/** T steps of the cell: inputs [T, B, F], weights [3S, S+F], bias [3S], h0 and c0 [B, S]. */
export function lltmSequenceForward(
  inputs: Tensor, weights: Tensor, bias: Tensor, h0: Tensor, c0: Tensor, options: SequenceForwardOptions = {},
): LLTMSequenceForwardResult {
  const fn = "lltmSequenceForward";
  const ins = [inputs, weights, bias, h0, c0];
  checkCommon(fn, FORWARD_ARGS, ins);
  const { dtype, device } = inputs;
  const { T, B, F, S } = sizes(inputs, h0);
  const bytes = options.training ?? true ? native.sequenceReserveBytes(fn, T, B, F, S, dtype, device) : 0;
  const reserve = bytes > 0 ? reserveOutput.allocate(dtype, device, T, B, F, S, bytes / itemSize(dtype))[0] : undefined;
  const out = forwardOutputs.allocate(dtype, device, T, B, F, S);
  if (reserve) out.push(reserve);
  run((a, o) => native.sequenceForward(fn, a, o, reserve, bytes), ins, out);
  const dispose = () => disposeAll(out);
  return { outputs: out[0]!, lastH: out[1]!, lastCell: out[2]!, reserve, dispose, [Symbol.dispose]: dispose };
}

const BACKWARD_ARGS = ["inputs", "weights", "h0", "reserve"];
const GRADIENT_ARGS = ["gradOutputs", "gradLastH", "gradLastCell"];

/** Checks the live tensors of a backward call (those given of the gradients too), their dtype and device. */
function checkBackward(
  fn: string, grads: readonly (Tensor | undefined)[], ins: readonly Tensor[], extra: readonly Tensor[] = [],
  extraNames: readonly string[] = [],
): void {
  const names = [...BACKWARD_ARGS], tensors = [...ins];
  grads.forEach((g, i) => {
    if (g !== undefined) {
      names.push(GRADIENT_ARGS[i]!);
      tensors.push(g);
    }
  });
  checkCommon(fn, [...names, ...extraNames], [...tensors, ...extra]);
}

/**
 * Gradients of a whole sequence from those of every step's h (gradOutputs
 * [T, B, S]) and of the last state (gradLastH, gradLastCell [B, S]), each
 * optional (zeros), given the training forward's reserve and its inputs, weights and h0.
 */
export function lltmSequenceBackward(
  gradOutputs: Tensor | undefined, gradLastH: Tensor | undefined, gradLastCell: Tensor | undefined,
  reserve: Tensor, inputs: Tensor, weights: Tensor, h0: Tensor,
): LLTMSequenceBackwardResult {
  const fn = "lltmSequenceBackward";
  const grads = [gradOutputs, gradLastH, gradLastCell];
  checkBackward(fn, grads, [inputs, weights, h0, reserve]);
  const { dtype, device } = inputs;
  const { T, B, F, S } = sizes(inputs, h0);
  const out = backwardOutputs.allocate(dtype, device, T, B, F, S);
  const bytes = reserve.numel * itemSize(dtype);
  run((a, o) => native.sequenceBackward(fn, grads, reserve, bytes, a, o, false), [inputs, weights, h0], out);
  const dispose = () => disposeAll(out);
  return {
    dInputs: out[0]!, dWeights: out[1]!, dBias: out[2]!, dH0: out[3]!, dC0: out[4]!, dispose, [Symbol.dispose]: dispose,
  };
}

/**
 * lltmSequenceBackward that adds the weights' and bias' gradients to dWeights
 * and dBias (as autograd accumulates into .grad) and returns the others.
 * dWeights and dBias must not share memory with the other arguments or each other.
 */
export function lltmSequenceBackwardAccumulate(
  gradOutputs: Tensor | undefined, gradLastH: Tensor | undefined, gradLastCell: Tensor | undefined,
  reserve: Tensor, inputs: Tensor, weights: Tensor, h0: Tensor, dWeights: Tensor, dBias: Tensor,
): LLTMSequenceStateGradients {
  const fn = "lltmSequenceBackwardAccumulate";
  const grads = [gradOutputs, gradLastH, gradLastCell];
  checkBackward(fn, grads, [inputs, weights, h0, reserve], [dWeights, dBias], ["dWeights", "dBias"]);
  const { dtype, device } = inputs;
  const { T, B, F, S } = sizes(inputs, h0);
  const out = stateGradientOutputs.allocate(dtype, device, T, B, F, S);
  const bytes = reserve.numel * itemSize(dtype);
  try {
    native.sequenceBackward(fn, grads, reserve, bytes, [inputs, weights, h0], [out[0]!, dWeights, dBias, out[1]!, out[2]!], true);
  } catch (e) {
    disposeAll(out);
    throw e;
  }
  const dispose = () => disposeAll(out);
  return { dInputs: out[0]!, dH0: out[1]!, dC0: out[2]!, dispose, [Symbol.dispose]: dispose };
}
