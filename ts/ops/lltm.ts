/**
 * The LLTM op on native kernels: lltmForward and lltmBackward take and return
 * exactly the tutorial's tensors. Every argument is checked here (disposed,
 * dtype, device, shape) before any memory is allocated or any kernel runs;
 * the native library checks again, for callers of the C ABI.
 */
import { describe } from "../descriptor.ts";
import type { Device } from "../device.ts";
import { dtypeCode } from "../dtype.ts";
import { checkStatus, LLTMError } from "../errors.ts";
import { native } from "../native/library.ts";
import { allocateGroup, disposedError, Tensor } from "../tensor.ts";

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

const FORWARD_ARGS = ["input", "weights", "bias", "old_h", "old_cell"];
const BACKWARD_ARGS = [
  "grad_h", "grad_cell", "new_cell", "input_gate", "output_gate", "candidate_cell", "X", "gate_weights", "weights",
];
const ACCUMULATE_ARGS = [...BACKWARD_ARGS, "d_weights", "d_bias"];

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
    if (!t.device.equals(first.device)) {
      throw new LLTMError(
        "INVALID_DEVICE",
        `${fn}: '${names[i]}' is on ${t.device} but '${names[0]}' is on ${first.device}; move it with .to("${first.device}")`,
      );
    }
  }
  return { dtype: first.dtype, device: first.device };
}

function expectShape(fn: string, name: string, t: Tensor, shape: readonly number[], symbols: string): void {
  const s = t.shape;
  let ok = s.length === shape.length;
  for (let i = 0; ok && i < s.length; i++) ok = s[i] === shape[i];
  if (!ok) {
    throw new LLTMError(
      "SHAPE_MISMATCH",
      `${fn}: '${name}' must have shape [${shape.join(", ")}] ${symbols}, got [${s.join(", ")}]`,
    );
  }
}

function expectRank(fn: string, name: string, t: Tensor, rank: number): void {
  if (t.ndim !== rank) {
    throw new LLTMError("SHAPE_MISMATCH", `${fn}: '${name}' must have ${rank} dimensions, got [${t.shape.join(", ")}]`);
  }
}

function disposeAll(tensors: readonly Tensor[]): void {
  for (const t of tensors) t.dispose();
}

/** Frees the outputs and throws if the native call failed; else a dispose function for all of them. */
function settle(status: number, out: readonly Tensor[]): () => void {
  if (status !== 0) {
    disposeAll(out);
    checkStatus(status, native().lltm_last_error);
  }
  return () => disposeAll(out);
}

/** One step of the cell: input [B,F], weights [3S,S+F], bias [3S], oldH and oldCell [B,S]. */
export function lltmForward(input: Tensor, weights: Tensor, bias: Tensor, oldH: Tensor, oldCell: Tensor): LLTMForwardResult {
  const fn = "lltmForward";
  const { dtype, device } = checkCommon(fn, FORWARD_ARGS, [input, weights, bias, oldH, oldCell]);
  expectRank(fn, "input", input, 2);
  expectRank(fn, "old_h", oldH, 2);
  const B = input.shape[0]!, F = input.shape[1]!, S = oldH.shape[1]!;
  expectShape(fn, "old_h", oldH, [B, S], "(B, S)");
  expectShape(fn, "old_cell", oldCell, [B, S], "(B, S)");
  expectShape(fn, "weights", weights, [3 * S, S + F], "(3S, S+F)");
  expectShape(fn, "bias", bias, [3 * S], "(3S)");

  const bs = [B, S];
  const out = allocateGroup([bs, bs, bs, bs, bs, [B, S + F], [B, 3 * S]], dtype, device);
  const lib = native();
  const status = lib.lltm_forward(
    describe(0, input), describe(1, weights), describe(2, bias), describe(3, oldH), describe(4, oldCell),
    describe(5, out[0]!), describe(6, out[1]!), describe(7, out[2]!), describe(8, out[3]!),
    describe(9, out[4]!), describe(10, out[5]!), describe(11, out[6]!),
    dtypeCode[dtype], device.kindCode, device.index,
  );
  const dispose = settle(status, out);
  return {
    newH: out[0]!, newCell: out[1]!, inputGate: out[2]!, outputGate: out[3]!, candidateCell: out[4]!,
    X: out[5]!, gateWeights: out[6]!, dispose, [Symbol.dispose]: dispose,
  };
}

/**
 * Checks the arguments of a backward call (those of lltmBackward, then any
 * `extra` ones; `names` names them all) and returns their dtype, device and sizes.
 */
function checkBackward(
  fn: string, gradH: Tensor, gradCell: Tensor, newCell: Tensor, inputGate: Tensor, outputGate: Tensor,
  candidateCell: Tensor, X: Tensor, gateWeights: Tensor, weights: Tensor,
  extra: readonly Tensor[] = [], names: readonly string[] = BACKWARD_ARGS,
): { dtype: Tensor["dtype"]; device: Device; B: number; F: number; S: number } {
  const { dtype, device } = checkCommon(
    fn, names, [gradH, gradCell, newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights, ...extra],
  );
  expectRank(fn, "grad_h", gradH, 2);
  expectRank(fn, "X", X, 2);
  const B = gradH.shape[0]!, S = gradH.shape[1]!, F = X.shape[1]! - S;
  if (F < 1) {
    throw new LLTMError("SHAPE_MISMATCH", `${fn}: 'X' must have more than S = ${S} columns (S+F), got [${X.shape.join(", ")}]`);
  }
  const bs = [B, S];
  for (const [name, t] of [["grad_cell", gradCell], ["new_cell", newCell], ["input_gate", inputGate],
    ["output_gate", outputGate], ["candidate_cell", candidateCell]] as const) {
    expectShape(fn, name, t, bs, "(B, S)");
  }
  expectShape(fn, "gate_weights", gateWeights, [B, 3 * S], "(B, 3S)");
  expectShape(fn, "weights", weights, [3 * S, S + F], "(3S, S+F)");
  return { dtype, device, B, F, S };
}

/**
 * Gradients of the step from gradH and gradCell (of newH and newCell) and what
 * lltmForward saved, in the tutorial's argument order.
 */
export function lltmBackward(
  gradH: Tensor, gradCell: Tensor, newCell: Tensor, inputGate: Tensor, outputGate: Tensor,
  candidateCell: Tensor, X: Tensor, gateWeights: Tensor, weights: Tensor,
): LLTMBackwardResult {
  const { dtype, device, B, F, S } = checkBackward(
    "lltmBackward", gradH, gradCell, newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights,
  );
  const bs = [B, S];
  const out = allocateGroup([bs, [B, F], [3 * S, S + F], [3 * S], bs], dtype, device);
  const lib = native();
  const status = lib.lltm_backward(
    describe(0, gradH), describe(1, gradCell), describe(2, newCell), describe(3, inputGate),
    describe(4, outputGate), describe(5, candidateCell), describe(6, X), describe(7, gateWeights),
    describe(8, weights), describe(9, out[0]!), describe(10, out[1]!), describe(11, out[2]!),
    describe(12, out[3]!), describe(13, out[4]!),
    dtypeCode[dtype], device.kindCode, device.index,
  );
  const dispose = settle(status, out);
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
 */
export function lltmBackwardAccumulate(
  gradH: Tensor, gradCell: Tensor, newCell: Tensor, inputGate: Tensor, outputGate: Tensor,
  candidateCell: Tensor, X: Tensor, gateWeights: Tensor, weights: Tensor, dWeights: Tensor, dBias: Tensor,
): LLTMStateGradients {
  const { dtype, device, B, F, S } = checkBackward(
    "lltmBackwardAccumulate", gradH, gradCell, newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights,
    [dWeights, dBias], ACCUMULATE_ARGS,
  );
  expectShape("lltmBackwardAccumulate", "d_weights", dWeights, [3 * S, S + F], "(3S, S+F)");
  expectShape("lltmBackwardAccumulate", "d_bias", dBias, [3 * S], "(3S)");
  const bs = [B, S];
  const out = allocateGroup([bs, [B, F], bs], dtype, device);
  const lib = native();
  const status = lib.lltm_backward_ex(
    describe(0, gradH), describe(1, gradCell), describe(2, newCell), describe(3, inputGate),
    describe(4, outputGate), describe(5, candidateCell), describe(6, X), describe(7, gateWeights),
    describe(8, weights), describe(9, out[0]!), describe(10, out[1]!), describe(11, dWeights),
    describe(12, dBias), describe(13, out[2]!),
    ACCUMULATE_PARAM_GRADS, dtypeCode[dtype], device.kindCode, device.index,
  );
  const dispose = settle(status, out);
  return { dOldH: out[0]!, dInput: out[1]!, dOldCell: out[2]!, dispose, [Symbol.dispose]: dispose };
}

/** LLTM_ACCUMULATE_PARAM_GRADS of csrc/lltm.h. */
const ACCUMULATE_PARAM_GRADS = 1;
