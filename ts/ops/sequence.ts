/**
 * The LLTM over a whole sequence in one native call each way (the
 * SEQUENCE_FORWARD and SEQUENCE_BACKWARD ops of csrc/lltm_ops.def): inputs
 * [T, B, F] from the state (h0, c0) [B, S] to every step's h [T, B, S] and
 * the last state, and backpropagation through time. A training forward
 * returns the reserve, the state its backward reads (an opaque tensor on the
 * same device, of as many bytes as lltm_buffer_bytes says); an inference
 * forward ({ training: false }) keeps none. Per-sample lengths (int32 [B],
 * each from 1 to T, on the inputs' device) run sample b for lengths[b] steps:
 * its later outputs are 0 and its last state is that after its own last
 * step; the backward, given the same lengths, passes no gradient through the
 * steps past a sample's length. As for the step, only what the
 * library cannot see is checked here (live Tensors, one device); the library
 * checks shapes, strides and dtypes before anything runs.
 */
import { ACCUMULATE_PARAM_GRADS, SEQUENCE_TRAINING } from "../native/constants.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon, disposeAll } from "./lltm.ts";
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
  /** Each sample's number of steps: int32 [B], each from 1 to T, on the inputs' device (default: T for all). */
  lengths?: Tensor;
}

export interface SequenceBackwardOptions {
  /** The forward's lengths. */
  lengths?: Tensor;
}

const FORWARD_ARGS = ["inputs", "weights", "bias", "h0", "c0"];

const FORWARD = native.op("SEQUENCE_FORWARD"), BACKWARD = native.op("SEQUENCE_BACKWARD");
const forwardOutputs = new Outputs(FORWARD, ["outputs", "last_h", "last_cell"], { last_h: "h0", last_cell: "c0" });
const parameterGradients = { d_weights: "weights", d_bias: "weights", d_c0: "h0" };
const backwardOutputs = new Outputs(BACKWARD, ["d_inputs", "d_weights", "d_bias", "d_h0", "d_c0"], parameterGradients);
const stateGradientOutputs = new Outputs(BACKWARD, ["d_inputs", "d_h0", "d_c0"], parameterGradients);
const initialStateGradientOutputs = new Outputs(BACKWARD, ["d_h0", "d_c0"], parameterGradients);

/** T steps of the cell: inputs [T, B, F], weights [3S, S+F], bias [3S], h0 and c0 [B, S]. */
export function lltmSequenceForward(
  inputs: Tensor, weights: Tensor, bias: Tensor, h0: Tensor, c0: Tensor, options: SequenceForwardOptions = {},
): LLTMSequenceForwardResult {
  const fn = "lltmSequenceForward";
  const ins = [inputs, weights, bias, h0, c0];
  const lengths = options.lengths;
  checkCommon(fn, lengths ? [...FORWARD_ARGS, "lengths"] : FORWARD_ARGS, lengths ? [...ins, lengths] : ins);
  const training = options.training ?? true;
  const out = forwardTensors(forwardOutputs, ins, training ? native.bufferBytes(FORWARD, fn, ins, SEQUENCE_TRAINING) : undefined);
  const reserve = training ? out[3] : undefined;
  const slots = lengths ? [...ins, out[0], out[1], out[2], reserve, lengths] : [...ins, ...out];
  try {
    native.run(FORWARD, fn, slots, training ? SEQUENCE_TRAINING : 0);
  } catch (e) {
    disposeAll(out);
    throw e;
  }
  const dispose = () => disposeAll(out);
  return { outputs: out[0]!, lastH: out[1]!, lastCell: out[2]!, reserve, dispose, [Symbol.dispose]: dispose };
}

/**
 * A forward's outputs, then (where `reserveBytes` is given) its reserve: an allocation of its own (on the first
 * input's device, in its dtype), so that it can be freed after the backward while the outputs live on.
 */
export function forwardTensors(outputs: Outputs, ins: readonly Tensor[], reserveBytes: number | undefined): Tensor[] {
  const { dtype, device, itemSize } = ins[0]!;
  const reserve = reserveBytes === undefined ? undefined : Tensor.empty([Math.max(1, Math.ceil(reserveBytes / itemSize))], { dtype, device });
  let out: Tensor[];
  try {
    out = outputs.allocate(ins, device);
  } catch (e) {
    reserve?.dispose();
    throw e;
  }
  if (reserve) out.push(reserve);
  return out;
}

const BACKWARD_ARGS = ["inputs", "weights", "h0", "reserve"];
const GRADIENT_ARGS = ["gradOutputs", "gradLastH", "gradLastCell"];

/**
 * Checks the live tensors of a backward call (`ins`, named `insNames`; those given of the gradients of the outputs,
 * h and c; `extra`) and their device.
 */
export function checkBackward(
  fn: string, grads: readonly (Tensor | undefined)[], ins: readonly Tensor[], insNames: readonly string[],
  extra: readonly Tensor[] = [], extraNames: readonly string[] = [],
): void {
  const names = [...insNames], tensors = [...ins];
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
 * optional (zeros), given the training forward's reserve and its inputs, weights, h0 and lengths.
 */
export function lltmSequenceBackward(
  gradOutputs: Tensor | undefined, gradLastH: Tensor | undefined, gradLastCell: Tensor | undefined,
  reserve: Tensor, inputs: Tensor, weights: Tensor, h0: Tensor, options: SequenceBackwardOptions = {},
): LLTMSequenceBackwardResult {
  const fn = "lltmSequenceBackward";
  const grads = [gradOutputs, gradLastH, gradLastCell];
  const lengths = options.lengths;
  checkBackward(fn, grads, [inputs, weights, h0, reserve], BACKWARD_ARGS, lengths ? [lengths] : [], lengths ? ["lengths"] : []);
  const tensors = [...grads, reserve, inputs, weights, h0];
  const out = backwardOutputs.allocate(tensors, inputs.device);
  try {
    native.run(BACKWARD, fn, [...tensors, ...out, lengths]);
  } catch (e) {
    disposeAll(out);
    throw e;
  }
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
  options: SequenceBackwardOptions = {},
): LLTMSequenceStateGradients {
  const fn = "lltmSequenceBackwardAccumulate";
  const g = backwardInto(fn, [gradOutputs, gradLastH, gradLastCell], reserve, inputs, weights, h0, dWeights, dBias, options.lengths, true);
  return { ...g, dInputs: g.dInputs! };
}

/**
 * The state gradients of a sequence whose parameter gradients are added into
 * dWeights and dBias; dInputs only where `inputsGradient` (autograd skips the
 * product when the inputs need no gradient, as PyTorch does).
 */
export function backwardInto(
  fn: string, grads: readonly (Tensor | undefined)[], reserve: Tensor, inputs: Tensor, weights: Tensor, h0: Tensor,
  dWeights: Tensor, dBias: Tensor, lengths: Tensor | undefined, inputsGradient: boolean,
): { dInputs: Tensor | undefined; dH0: Tensor; dC0: Tensor; dispose(): void } & Disposable {
  const extra = lengths ? [dWeights, dBias, lengths] : [dWeights, dBias];
  checkBackward(
    fn, grads, [inputs, weights, h0, reserve], BACKWARD_ARGS, extra, lengths ? ["dWeights", "dBias", "lengths"] : ["dWeights", "dBias"],
  );
  const tensors = [...grads, reserve, inputs, weights, h0];
  const out = (inputsGradient ? stateGradientOutputs : initialStateGradientOutputs).allocate(tensors, inputs.device);
  const [dInputs, dH0, dC0] = inputsGradient ? out : [undefined, ...out];
  try {
    native.run(BACKWARD, fn, [...tensors, dInputs, dWeights, dBias, dH0!, dC0!, lengths], ACCUMULATE_PARAM_GRADS);
  } catch (e) {
    disposeAll(out);
    throw e;
  }
  const dispose = () => disposeAll(out);
  return { dInputs, dH0: dH0!, dC0: dC0!, dispose, [Symbol.dispose]: dispose };
}
