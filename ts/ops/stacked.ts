/**
 * L LLTM layers over a whole sequence in one native call each way (the
 * STACKED_FORWARD and STACKED_BACKWARD ops of csrc/lltm_ops.def), layer l > 0
 * on layer l - 1's outputs, as torch.nn.LSTM's num_layers. The layers'
 * parameters come as one flat tensor `params`: layer after layer, its weights
 * [3S, S+F_l] then its bias [3S] (F_0 = F, then S), each part starting at a
 * multiple of `align` elements (the layout of a fused optimizer's buffer,
 * ../optim/flat.ts, whose parts start 64-byte aligned). States are [L, B, S].
 * As for the sequence ops, only what the library cannot see is checked here.
 */
import { ACCUMULATE_PARAM_GRADS, SEQUENCE_TRAINING } from "../native/constants.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon, disposeAll } from "./lltm.ts";
import { Outputs } from "./outputs.ts";
import { checkBackward, forwardTensors, type LLTMSequenceForwardResult } from "./sequence.ts";

export interface StackedOptions {
  /** Each sample's number of steps: int32 [B], each from 1 to T, on the inputs' device (default: T for all). */
  lengths?: Tensor;
  /** params' parts start at multiples of this many elements, 1 to 64 (default 1: packed). */
  align?: number;
}

export interface StackedForwardOptions extends StackedOptions {
  /** Keep the reserve for a backward pass (default true); false runs inference and keeps nothing. */
  training?: boolean;
}

export interface StackedBackwardOptions extends StackedOptions {
  /** Add the parameters' gradient into this tensor (params' shape) instead of returning a new one. */
  dParams?: Tensor;
  /** Whether to compute the inputs' gradient (default true). */
  inputsGradient?: boolean;
}

export interface LLTMStackedBackwardResult extends Disposable {
  /** [T, B, F], undefined where not asked for. */
  dInputs: Tensor | undefined;
  /** params' gradient, undefined where it was added into options.dParams. */
  dParams: Tensor | undefined;
  /** [L, B, S] each. */
  dH0: Tensor;
  dC0: Tensor;
  dispose(): void;
}

const FORWARD = native.op("STACKED_FORWARD"), BACKWARD = native.op("STACKED_BACKWARD");
const forwardOutputs = new Outputs(FORWARD, ["outputs", "last_h", "last_cell"], { last_h: "h0", last_cell: "c0" });
// d_params ("=params") is made as params is, beside these.
const withInputs = new Outputs(BACKWARD, ["d_inputs", "d_h0", "d_c0"], { d_c0: "h0" });
const statesOnly = new Outputs(BACKWARD, ["d_h0", "d_c0"], { d_c0: "h0" });

/** L layers: inputs [T, B, F], params (see above), h0 and c0 [L, B, S] -> every step of the last layer, and the last states. */
export function lltmStackedForward(
  inputs: Tensor, params: Tensor, h0: Tensor, c0: Tensor, options: StackedForwardOptions = {},
): LLTMSequenceForwardResult {
  const fn = "lltmStackedForward";
  const ins = [inputs, params, h0, c0];
  const { lengths, align = 1 } = options;
  checkCommon(fn, lengths ? ["inputs", "params", "h0", "c0", "lengths"] : ["inputs", "params", "h0", "c0"], lengths ? [...ins, lengths] : ins);
  const training = options.training ?? true;
  const out = forwardTensors(forwardOutputs, ins, training ? native.bufferBytes(FORWARD, fn, ins, SEQUENCE_TRAINING, [align]) : undefined);
  const reserve = training ? out[3] : undefined;
  try {
    native.run(FORWARD, fn, [...ins, out[0], out[1], out[2], reserve, lengths], training ? SEQUENCE_TRAINING : 0, [align]);
  } catch (e) {
    disposeAll(out);
    throw e;
  }
  const dispose = () => disposeAll(out);
  return { outputs: out[0]!, lastH: out[1]!, lastCell: out[2]!, reserve, dispose, [Symbol.dispose]: dispose };
}

/**
 * Gradients of the stack from those of the last layer's every step (gradOutputs [T, B, S]) and of each layer's last
 * state (gradLastH, gradLastCell [L, B, S]), each optional (zeros), given the training forward's reserve, inputs,
 * params, h0, lengths and align.
 */
export function lltmStackedBackward(
  gradOutputs: Tensor | undefined, gradLastH: Tensor | undefined, gradLastCell: Tensor | undefined,
  reserve: Tensor, inputs: Tensor, params: Tensor, h0: Tensor, options: StackedBackwardOptions = {},
): LLTMStackedBackwardResult {
  const fn = "lltmStackedBackward";
  const { lengths, align = 1, dParams: into, inputsGradient = true } = options;
  const extra = [into, lengths].filter((t): t is Tensor => t !== undefined);
  const extraNames = [...(into ? ["dParams"] : []), ...(lengths ? ["lengths"] : [])];
  checkBackward(fn, [gradOutputs, gradLastH, gradLastCell], [reserve, inputs, params, h0], ["reserve", "inputs", "params", "h0"], extra, extraNames);
  const tensors = [gradOutputs, gradLastH, gradLastCell, reserve, inputs, params, h0];
  const out = (inputsGradient ? withInputs : statesOnly).allocate(tensors, inputs.device);
  const dInputs = inputsGradient ? out[0] : undefined;
  const dH0 = out[out.length - 2]!, dC0 = out[out.length - 1]!;
  let dParams: Tensor | undefined;
  try {
    if (into === undefined) out.push(dParams = Tensor.empty(params.shape, { dtype: params.dtype, device: params.device }));
  } catch (e) {
    disposeAll(out);
    throw e;
  }
  try {
    native.run(BACKWARD, fn, [...tensors, dInputs, dParams ?? into, dH0, dC0, lengths], into === undefined ? 0 : ACCUMULATE_PARAM_GRADS, [align]);
  } catch (e) {
    disposeAll(out);
    throw e;
  }
  const dispose = () => disposeAll(out);
  return { dInputs, dParams, dH0, dC0, dispose, [Symbol.dispose]: dispose };
}
