/**
 * LLTMFunction, the tutorial's autograd function: forward runs the op and
 * keeps what backward needs; backward(gradH, gradCell) returns the gradients
 * of the input, the weights, the bias, old_h and old_cell, or, given an
 * accumulation target, adds those of the weights and bias to it (as autograd
 * accumulates into .grad) and returns the others. The saved tensors are
 * released once backward has run or when the function is disposed; the
 * outputs newH and newCell live until dispose().
 */
import { LLTMError } from "../errors.ts";
import {
  type LLTMBackwardOptions, type LLTMBackwardResult, lltmBackward, lltmBackwardAccumulate, type LLTMForwardResult, lltmForward,
  type LLTMStateGradients,
} from "../ops/lltm.ts";
import type { Tensor } from "../tensor/index.ts";

/** Where backward adds the parameters' gradients. */
export interface GradientTarget {
  readonly dWeights: Tensor;
  readonly dBias: Tensor;
}

export class LLTMFunction implements Disposable {
  private saved: { forward: LLTMForwardResult; weights: Tensor } | undefined;
  readonly newH: Tensor;
  readonly newCell: Tensor;

  private constructor(forward: LLTMForwardResult, weights: Tensor) {
    this.saved = { forward, weights };
    this.newH = forward.newH;
    this.newCell = forward.newCell;
  }

  /** Runs the cell forward on (input, weights, bias, oldH, oldCell). */
  static forward(input: Tensor, weights: Tensor, bias: Tensor, oldH: Tensor, oldCell: Tensor): LLTMFunction {
    const out = lltmForward(input, weights, bias, oldH, oldCell);
    // Backward needs the weights as they are: a reference of our own keeps their memory alive.
    return new LLTMFunction(out, weights.retain());
  }

  /** Gradients of (input, weights, bias, oldH, oldCell) from those of (newH, newCell); runs once. */
  backward(gradH: Tensor, gradCell: Tensor, into?: undefined, options?: LLTMBackwardOptions): LLTMBackwardResult;
  /** Adds the weights' and bias' gradients to `into` and returns the others; runs once. */
  backward(gradH: Tensor, gradCell: Tensor, into: GradientTarget, options?: LLTMBackwardOptions): LLTMStateGradients;
  backward(
    gradH: Tensor, gradCell: Tensor, into?: GradientTarget, options: LLTMBackwardOptions = {},
  ): LLTMBackwardResult | LLTMStateGradients {
    const saved = this.saved;
    if (!saved) {
      throw new LLTMError("INVALID_ARGUMENT", "LLTMFunction.backward: backward has already run or the function was disposed");
    }
    const f = saved.forward;
    const grads = into
      ? lltmBackwardAccumulate(
        gradH, gradCell, f.newCell, f.inputGate, f.outputGate, f.candidateCell, f.X, f.gateWeights, saved.weights,
        into.dWeights, into.dBias, options,
      )
      : lltmBackward(
        gradH, gradCell, f.newCell, f.inputGate, f.outputGate, f.candidateCell, f.X, f.gateWeights, saved.weights, options,
      );
    this.releaseSaved();
    return grads;
  }

  /** Releases the saved tensors and the outputs. */
  dispose(): void {
    this.releaseSaved();
    this.newH.dispose();
    this.newCell.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  private releaseSaved(): void {
    const saved = this.saved;
    if (!saved) return;
    this.saved = undefined;
    const f = saved.forward;
    for (const t of [f.inputGate, f.outputGate, f.candidateCell, f.X, f.gateWeights, saved.weights]) t.dispose();
  }
}
