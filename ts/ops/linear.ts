/**
 * linear, as torch.nn.functional.linear: y = x Wᵀ + bias for x [..., K]
 * (any leading dimensions, flattened to the N rows of the LINEAR op of
 * csrc/lltm_ops.def), weight [M, K], an optional bias [M]; and its backward
 * (LINEAR_BACKWARD), each gradient computed only where asked for, or added
 * into a given tensor as autograd accumulates into .grad. The library checks
 * shapes, strides and dtypes; here, live Tensors on one device.
 */
import { ACCUMULATE_PARAM_GRADS } from "../native/constants.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon, disposeAll } from "./lltm.ts";
import { Outputs } from "./outputs.ts";
import { rows, unflatten } from "./rows.ts";

const LINEAR = native.op("LINEAR"), BACKWARD = native.op("LINEAR_BACKWARD");
const linearOutputs = new Outputs(LINEAR, ["y"]);

/** y = x Wᵀ + bias: x [..., K], weight [M, K], bias [M] (optional) -> y [..., M]. */
export function linear(x: Tensor, weight: Tensor, bias?: Tensor): Tensor {
  const fn = "linear";
  if (bias === undefined) checkCommon(fn, ["x", "weight"], [x, weight]);
  else checkCommon(fn, ["x", "weight", "bias"], [x, weight, bias]);
  using x2 = rows(x);
  const ins = [x2, weight, bias];
  const [y] = linearOutputs.allocate(ins, x.device);
  try {
    native.run(LINEAR, fn, [x2, weight, bias, y]);
  } catch (e) {
    y!.dispose();
    throw e;
  }
  return unflatten(y!, x.shape);
}

export interface LinearBackwardOptions {
  /** Whether to compute dX, dWeight and dBias (each true by default). */
  needX?: boolean;
  needWeight?: boolean;
  needBias?: boolean;
  /** Add the weight's gradient into this tensor [M, K] (as autograd's .grad) instead of returning a new one. */
  dWeight?: Tensor;
  /** Add the bias' gradient into this tensor [M] instead of returning a new one. */
  dBias?: Tensor;
}

export interface LinearGradients extends Disposable {
  /** [..., K] like x, unless not asked for. */
  dX: Tensor | undefined;
  /** [M, K], unless not asked for or added into options.dWeight. */
  dWeight: Tensor | undefined;
  /** [M], unless not asked for or added into options.dBias. */
  dBias: Tensor | undefined;
  dispose(): void;
}

const OUTPUT_SLOTS = ["d_x", "d_weight", "d_bias"] as const;
/** Outputs by which of d_x, d_weight, d_bias are allocated (bits 1, 2, 4). */
const backwardOutputs = new Map<number, Outputs>();

function outputsFor(mask: number): Outputs {
  let o = backwardOutputs.get(mask);
  if (!o) {
    o = new Outputs(BACKWARD, OUTPUT_SLOTS.filter((_, i) => (mask & (1 << i)) !== 0), { d_bias: "weight" });
    backwardOutputs.set(mask, o);
  }
  return o;
}

/**
 * The gradients of linear from gradY [..., M] (of y), x [..., K] and weight
 * [M, K]: dX = gradY W, dWeight = gradYᵀ x, dBias = the column sums of gradY.
 */
export function linearBackward(gradY: Tensor, x: Tensor, weight: Tensor, options: LinearBackwardOptions = {}): LinearGradients {
  const fn = "linearBackward";
  const { dWeight: intoWeight, dBias: intoBias } = options;
  const names = ["gradY", "x", "weight"], tensors = [gradY, x, weight];
  if (intoWeight !== undefined) {
    names.push("dWeight");
    tensors.push(intoWeight);
  }
  if (intoBias !== undefined) {
    names.push("dBias");
    tensors.push(intoBias);
  }
  checkCommon(fn, names, tensors);
  const accumulate = intoWeight !== undefined || intoBias !== undefined;
  const needX = options.needX ?? true;
  const needWeight = intoWeight === undefined && (options.needWeight ?? true);
  const needBias = intoBias === undefined && (options.needBias ?? true);
  const mask = (needX ? 1 : 0) | (needWeight ? 2 : 0) | (needBias ? 4 : 0);
  using g2 = rows(gradY);
  using x2 = rows(x);
  const ins = [g2, x2, weight];
  const out = mask === 0 ? [] : outputsFor(mask).allocate(ins, x.device);
  let k = 0;
  const dX = needX ? out[k++] : undefined;
  const dWeight = needWeight ? out[k++] : undefined;
  const dBias = needBias ? out[k++] : undefined;
  try {
    // With the flag, a gradient made here is added to as well: it starts at zero.
    if (accumulate) for (const t of [dWeight, dBias]) t?.fill(0);
    native.run(BACKWARD, fn, [g2, x2, weight, dX, dWeight ?? intoWeight, dBias ?? intoBias], accumulate ? ACCUMULATE_PARAM_GRADS : 0);
  } catch (e) {
    disposeAll(out);
    throw e;
  }
  const result = { dX: dX && unflatten(dX, x.shape), dWeight, dBias };
  const dispose = () => disposeAll([result.dX, dWeight, dBias].filter((t): t is Tensor => t !== undefined));
  return { ...result, dispose, [Symbol.dispose]: dispose };
}
