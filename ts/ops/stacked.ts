/**
 * L LLTM layers over a whole sequence in one native call each way (the
 * STACKED_FORWARD and STACKED_BACKWARD ops of csrc/lltm_ops.def), layer l > 0
 * on layer l - 1's outputs, as torch.nn.LSTM's num_layers, in one direction or
 * two (bidirectional: the second runs each sample backwards within its
 * length). The parameters come as one flat tensor `params`: the first
 * direction's layers, then the second's, each layer its weights [3S, S+F_l]
 * then its bias [3S] (F_0 = F, then D·S), each part starting at a multiple of
 * `align` elements (the layout of a fused optimizer's buffer,
 * ../optim/flat.ts, whose parts start 64-byte aligned). States are
 * [L·D, B, S] (layer l's direction d at l·D + d, as torch.nn.LSTM's), outputs
 * [T, B, D·S]; the native ops take them as [L, D, B, S] and [T, B, D, S]. As
 * for the sequence ops, only what the library cannot see is checked here.
 */
import { LLTMError } from "../errors.ts";
import { type Float32MatmulPrecision, getFloat32MatmulPrecision } from "../matmul_precision.ts";
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
  /** Two directions, as torch.nn.LSTM's bidirectional (default false). */
  bidirectional?: boolean;
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
  /** [L·D, B, S] each. */
  dH0: Tensor;
  dC0: Tensor;
  dispose(): void;
}

const FORWARD = native.op("STACKED_FORWARD"), BACKWARD = native.op("STACKED_BACKWARD");
const forwardOutputs = new Outputs(FORWARD, ["outputs", "last_h", "last_cell"], { last_h: "h0", last_cell: "c0" });
// d_params ("=params") is made as params is, beside these.
const withInputs = new Outputs(BACKWARD, ["d_inputs", "d_h0", "d_c0"], { d_c0: "h0" });
const statesOnly = new Outputs(BACKWARD, ["d_h0", "d_c0"], { d_c0: "h0" });

/** `states` [L·D, B, S] as the native ops take them, [L, D, B, S] (a view, or a copy where no view fits). */
function byDirection(fn: string, name: string, states: Tensor, D: number): Tensor {
  const [LD = 0, B = 0, S = 0] = states.shape;
  if (states.ndim !== 3 || LD % D !== 0) {
    throw new LLTMError(
      "SHAPE_MISMATCH",
      `${fn}: '${name}' has shape [${states.shape.join(", ")}]; expected [L·D, B, S] with D = ${D} direction${D === 2 ? "s (bidirectional)" : ""}`,
    );
  }
  return states.reshape([LD / D, D, B, S]);
}

/** `t` reshaped to `shape` (a view of a contiguous native output), `t` itself disposed. */
function reshaped(t: Tensor, shape: readonly number[]): Tensor {
  try {
    return t.reshape(shape);
  } finally {
    t.dispose();
  }
}

/**
 * L layers in D directions: inputs [T, B, F], params (see above), h0 and c0 [L·D, B, S] -> every step of the last
 * layer ([T, B, D·S]), and the last states ([L·D, B, S]).
 */
export function lltmStackedForward(
  inputs: Tensor, params: Tensor, h0: Tensor, c0: Tensor, options: StackedForwardOptions = {},
): LLTMSequenceForwardResult {
  const fn = "lltmStackedForward";
  const { lengths, align = 1 } = options;
  const D = options.bidirectional ? 2 : 1;
  checkCommon(fn, lengths ? ["inputs", "params", "h0", "c0", "lengths"] : ["inputs", "params", "h0", "c0"], lengths ? [inputs, params, h0, c0, lengths] : [inputs, params, h0, c0]);
  using h = byDirection(fn, "h0", h0, D);
  using c = byDirection(fn, "c0", c0, D);
  const ins = [inputs, params, h, c];
  const training = options.training ?? true;
  const out = forwardTensors(forwardOutputs, ins, training ? native.bufferBytes(FORWARD, fn, ins, SEQUENCE_TRAINING, [align]) : undefined);
  const reserve = training ? out[3] : undefined;
  if (reserve !== undefined && reserve.device.kind === "cuda") reservePrecision.set(reserve, getFloat32MatmulPrecision());
  try {
    native.run(FORWARD, fn, [...ins, out[0], out[1], out[2], reserve, lengths], training ? SEQUENCE_TRAINING : 0, [align]);
  } catch (e) {
    disposeAll(out);
    throw e;
  }
  const [T, B, , S] = out[0]!.shape as [number, number, number, number];
  const outputs = reshaped(out[0]!, [T, B, D * S]), lastH = reshaped(out[1]!, h0.shape), lastCell = reshaped(out[2]!, c0.shape);
  const kept = reserve ? [outputs, lastH, lastCell, reserve] : [outputs, lastH, lastCell];
  const dispose = () => disposeAll(kept);
  return { outputs, lastH, lastCell, reserve, dispose, [Symbol.dispose]: dispose };
}

/**
 * The float32 matmul precision each CUDA training forward ran at, by its reserve: whether the layers ran as a
 * wavefront, and so how the reserve is laid out, depends on it (the backward must run at the same).
 */
const reservePrecision = new WeakMap<Tensor, Float32MatmulPrecision>();

/**
 * Gradients of the stack from those of the last layer's every step (gradOutputs [T, B, D·S]) and of each layer's
 * last states (gradLastH, gradLastCell [L·D, B, S]), each optional (zeros), given the training forward's reserve,
 * inputs, params, h0, lengths, align and directions.
 */
export function lltmStackedBackward(
  gradOutputs: Tensor | undefined, gradLastH: Tensor | undefined, gradLastCell: Tensor | undefined,
  reserve: Tensor, inputs: Tensor, params: Tensor, h0: Tensor, options: StackedBackwardOptions = {},
): LLTMStackedBackwardResult {
  const fn = "lltmStackedBackward";
  const made = reservePrecision.get(reserve), now = getFloat32MatmulPrecision();
  if (made !== undefined && made !== now) {
    throw new LLTMError(
      "INVALID_ARGUMENT",
      `${fn}: the float32 matmul precision is "${now}" but the forward that made 'reserve' ran at "${made}" (on CUDA ` +
        "its layout follows the precision); set it back for the backward",
    );
  }
  const { lengths, align = 1, dParams: into, inputsGradient = true } = options;
  const D = options.bidirectional ? 2 : 1;
  const extra = [into, lengths].filter((t): t is Tensor => t !== undefined);
  const extraNames = [...(into ? ["dParams"] : []), ...(lengths ? ["lengths"] : [])];
  checkBackward(fn, [gradOutputs, gradLastH, gradLastCell], [reserve, inputs, params, h0], ["reserve", "inputs", "params", "h0"], extra, extraNames);
  using h = byDirection(fn, "h0", h0, D);
  using gH = gradLastH && byDirection(fn, "gradLastH", gradLastH, D);
  using gC = gradLastCell && byDirection(fn, "gradLastCell", gradLastCell, D);
  const [T = 0, B = 0, DS = 0] = gradOutputs?.shape ?? [];
  if (gradOutputs !== undefined && (gradOutputs.ndim !== 3 || DS % D !== 0)) {
    throw new LLTMError("SHAPE_MISMATCH", `${fn}: 'gradOutputs' has shape [${gradOutputs.shape.join(", ")}]; expected [T, B, D·S] with D = ${D}`);
  }
  using gOut = gradOutputs?.reshape([T, B, D, DS / D]);
  const tensors = [gOut, gH, gC, reserve, inputs, params, h];
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
  const dH = reshaped(dH0, h0.shape), dC = reshaped(dC0, h0.shape);
  const kept = [dInputs, dParams, dH, dC].filter((t): t is Tensor => t !== undefined);
  const dispose = () => disposeAll(kept);
  return { dInputs, dParams, dH0: dH, dC0: dC, dispose, [Symbol.dispose]: dispose };
}
