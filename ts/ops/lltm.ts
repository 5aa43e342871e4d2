/**
 * The LLTM op on native kernels: lltmForward and lltmBackward take and return
 * exactly the tutorial's tensors. Here only what the library cannot see is
 * checked (live Tensors, one dtype and one device); the library checks every
 * shape and stride before any kernel runs, and its messages come back with
 * these functions' argument names.
 */
import type { Device } from "../device.ts";
import { LLTMError } from "../errors.ts";
import * as native from "../native/index.ts";
import { allocateGroup, disposedError, sharesMemory, Tensor } from "../tensor.ts";

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
function checkCommon(
  fn: string, names: readonly string[], tensors: readonly Tensor[],
): { dtype: Tensor["dtype"]; device: Device } {
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
  return { dtype: first.dtype, device: first.device };
}

/** Runs a native call that writes `out`, freeing them if it fails. */
function settle(call: () => void, out: readonly Tensor[]): () => void {
  const dispose = () => {
    for (const t of out) t.dispose();
  };
  try {
    call();
  } catch (e) {
    dispose();
    throw e;
  }
  return dispose;
}

/*
 * The outputs' sizes are read from the inputs without checking them: where
 * a rank is wrong, a size of 1 stands in, and the library refuses the call
 * (naming the argument) before anything is written.
 */

/** One step of the cell: input [B,F], weights [3S,S+F], bias [3S], oldH and oldCell [B,S]. */
export function lltmForward(input: Tensor, weights: Tensor, bias: Tensor, oldH: Tensor, oldCell: Tensor): LLTMForwardResult {
  const ins = [input, weights, bias, oldH, oldCell];
  const { dtype, device } = checkCommon("lltmForward", FORWARD_ARGS, ins);
  const B = input.shape[0]!, F = input.shape[1] ?? 1, S = oldH.shape[1] ?? 1;
  const bs = [B, S];
  const out = allocateGroup([bs, bs, bs, bs, bs, [B, S + F], [B, 3 * S]], dtype, device);
  const dispose = settle(() => native.forward("lltmForward", ins, out), out);
  return {
    newH: out[0]!, newCell: out[1]!, inputGate: out[2]!, outputGate: out[3]!, candidateCell: out[4]!,
    X: out[5]!, gateWeights: out[6]!, dispose, [Symbol.dispose]: dispose,
  };
}

/** B, F and S of a backward call, from gradH and X. */
function backwardSizes(gradH: Tensor, X: Tensor): { B: number; F: number; S: number } {
  const B = gradH.shape[0]!, S = gradH.shape[1] ?? 1;
  return { B, F: Math.max(1, (X.shape[1] ?? 1) - S), S };
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
  const { dtype, device } = checkCommon("lltmBackward", BACKWARD_ARGS, ins);
  const { B, F, S } = backwardSizes(gradH, X);
  const bs = [B, S];
  const out = allocateGroup([bs, [B, F], [3 * S, S + F], [3 * S], bs], dtype, device);
  const dispose = settle(() => native.backward("lltmBackward", ins, out, false), out);
  return {
    dOldH: out[0]!, dInput: out[1]!, dWeights: out[2]!, dBias: out[3]!, dOldCell: out[4]!,
    dispose, [Symbol.dispose]: dispose,
  };
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
 * dWeights and dBias must not share memory with the other arguments or each other.
 */
export function lltmBackwardAccumulate(
  gradH: Tensor, gradCell: Tensor, newCell: Tensor, inputGate: Tensor, outputGate: Tensor,
  candidateCell: Tensor, X: Tensor, gateWeights: Tensor, weights: Tensor, dWeights: Tensor, dBias: Tensor,
): LLTMStateGradients {
  const fn = "lltmBackwardAccumulate";
  const args = [gradH, gradCell, newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights, dWeights, dBias];
  const { dtype, device } = checkCommon(fn, ACCUMULATE_ARGS, args);
  for (let target = args.length - 2; target < args.length; target++) {
    for (let i = 0; i < target; i++) {
      if (sharesMemory(args[target]!, args[i]!)) {
        throw new LLTMError(
          "INVALID_ARGUMENT",
          `${fn}: '${ACCUMULATE_ARGS[target]}' shares memory with '${ACCUMULATE_ARGS[i]}'; ` +
            "the gradients need tensors of their own",
        );
      }
    }
  }
  const { B, F, S } = backwardSizes(gradH, X);
  const bs = [B, S];
  const out = allocateGroup([bs, [B, F], bs], dtype, device);
  const dispose = settle(() => native.backward(fn, args, [out[0]!, out[1]!, dWeights, dBias, out[2]!], true), out);
  return { dOldH: out[0]!, dInput: out[1]!, dOldCell: out[2]!, dispose, [Symbol.dispose]: dispose };
}
