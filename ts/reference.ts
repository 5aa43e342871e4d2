/**
 * The LLTM in plain TypeScript, in float64: the reference the native kernels
 * are tested against, and the `ref` variant of the benchmark. Written for
 * clarity, following the tutorial's Python formulas one line at a time,
 * except for the activations' slopes (below).
 */
import { LLTMError } from "./errors.ts";
import { Tensor } from "./tensor/index.ts";

/** A row-major float64 matrix (a vector is a 1 x n matrix). */
export interface Matrix {
  rows: number;
  cols: number;
  data: Float64Array;
}

export function matrix(rows: number, cols: number, data = new Float64Array(rows * cols)): Matrix {
  return { rows, cols, data };
}

/** A tensor's elements as a float64 matrix (a 1-D tensor becomes one row). */
export function toMatrix(t: Tensor): Matrix {
  const values = Float64Array.from(t.toTypedArray());
  return t.ndim === 1 ? matrix(1, t.shape[0]!, values) : matrix(t.shape[0]!, t.shape[1]!, values);
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const elu = (x: number) => (x > 0 ? x : Math.expm1(x));

/*
 * The activations' slopes from their arguments, in forms that keep their
 * relative accuracy where the activations saturate (as the native kernels
 * form them): the tutorial's sigma (1 - sigma) and 1 - tanh(c)^2 subtract
 * from 1 a value that has rounded to within an ulp of it (sigma(g) is 1 in
 * float64 from g = 37 on, where the slope is still 1e-16), so they keep few
 * digits or none there.
 */
/** sigma'(g) = sigma(g) sigma(-g). */
export const sigmoidSlope = (g: number): number => 1 / ((1 + Math.exp(-g)) * (1 + Math.exp(g)));
/** tanh'(c) = 1 / cosh(c)^2 (0 once cosh overflows, past |c| = 710, where the slope is below float64's range). */
export const tanhSlope = (c: number): number => 1 / Math.cosh(c) ** 2;
/** elu'(g). */
export const eluSlope = (g: number): number => (g > 0 ? 1 : Math.exp(g));

export interface ReferenceForward {
  newH: Matrix;
  newCell: Matrix;
  inputGate: Matrix;
  outputGate: Matrix;
  candidateCell: Matrix;
  X: Matrix;
  gateWeights: Matrix;
}

export interface ReferenceBackward {
  dOldH: Matrix;
  dInput: Matrix;
  dWeights: Matrix;
  dBias: Matrix;
  dOldCell: Matrix;
  /**
   * For each gradient that is a sum (over the batch's rows, or the gates), the sum of its terms' magnitudes,
   * element by element: what an implementation's rounding scales with where the terms cancel.
   */
  magnitudes: { dOldH: Matrix; dInput: Matrix; dWeights: Matrix; dBias: Matrix };
}

export function referenceForwardMatrices(input: Matrix, weights: Matrix, bias: Matrix, oldH: Matrix, oldCell: Matrix): ReferenceForward {
  const B = input.rows, F = input.cols, S = oldH.cols, K = S + F;
  // X = cat([old_h, input], dim=1)
  const X = matrix(B, K);
  for (let b = 0; b < B; b++) {
    for (let k = 0; k < S; k++) X.data[b * K + k] = oldH.data[b * S + k]!;
    for (let k = 0; k < F; k++) X.data[b * K + S + k] = input.data[b * F + k]!;
  }
  // gate_weights = F.linear(X, weights, bias)
  const G = matrix(B, 3 * S);
  for (let b = 0; b < B; b++) {
    for (let n = 0; n < 3 * S; n++) {
      let sum = bias.data[n]!;
      for (let k = 0; k < K; k++) sum += X.data[b * K + k]! * weights.data[n * K + k]!;
      G.data[b * 3 * S + n] = sum;
    }
  }
  const newH = matrix(B, S), newCell = matrix(B, S), inputGate = matrix(B, S);
  const outputGate = matrix(B, S), candidateCell = matrix(B, S);
  for (let b = 0; b < B; b++) {
    for (let s = 0; s < S; s++) {
      const g = b * 3 * S, e = b * S + s;
      inputGate.data[e] = sigmoid(G.data[g + s]!);
      outputGate.data[e] = sigmoid(G.data[g + S + s]!);
      candidateCell.data[e] = elu(G.data[g + 2 * S + s]!);
      newCell.data[e] = oldCell.data[e]! + candidateCell.data[e]! * inputGate.data[e]!;
      newH.data[e] = Math.tanh(newCell.data[e]!) * outputGate.data[e]!;
    }
  }
  return { newH, newCell, inputGate, outputGate, candidateCell, X, gateWeights: G };
}

export function referenceBackwardMatrices(
  gradH: Matrix, gradCell: Matrix, newCell: Matrix, inputGate: Matrix, outputGate: Matrix,
  candidateCell: Matrix, X: Matrix, gateWeights: Matrix, weights: Matrix,
): ReferenceBackward {
  const B = gradH.rows, S = gradH.cols, K = X.cols, F = K - S;
  const dGates = matrix(B, 3 * S);
  const dOldCell = matrix(B, S);
  for (let b = 0; b < B; b++) {
    for (let s = 0; s < S; s++) {
      const e = b * S + s, g = b * 3 * S;
      const i = inputGate.data[e]!, o = outputGate.data[e]!, z = candidateCell.data[e]!;
      const t = Math.tanh(newCell.data[e]!);
      const dOutputGate = t * gradH.data[e]!;
      const dTanhNewCell = o * gradH.data[e]!;
      const dNewCell = tanhSlope(newCell.data[e]!) * dTanhNewCell + gradCell.data[e]!;
      dOldCell.data[e] = dNewCell;
      const dCandidateCell = i * dNewCell;
      const dInputGate = z * dNewCell;
      dGates.data[g + s] = dInputGate * sigmoidSlope(gateWeights.data[g + s]!);
      dGates.data[g + S + s] = dOutputGate * sigmoidSlope(gateWeights.data[g + S + s]!);
      dGates.data[g + 2 * S + s] = dCandidateCell * eluSlope(gateWeights.data[g + 2 * S + s]!);
    }
  }
  // d_weights = d_gates.t().mm(X); d_bias = d_gates.sum(dim=0)
  const dWeights = matrix(3 * S, K), dBias = matrix(1, 3 * S);
  const mWeights = matrix(3 * S, K), mBias = matrix(1, 3 * S);
  for (let n = 0; n < 3 * S; n++) {
    let bsum = 0, bmag = 0;
    for (let b = 0; b < B; b++) {
      bsum += dGates.data[b * 3 * S + n]!;
      bmag += Math.abs(dGates.data[b * 3 * S + n]!);
    }
    dBias.data[n] = bsum;
    mBias.data[n] = bmag;
    for (let k = 0; k < K; k++) {
      let sum = 0, mag = 0;
      for (let b = 0; b < B; b++) {
        const term = dGates.data[b * 3 * S + n]! * X.data[b * K + k]!;
        sum += term;
        mag += Math.abs(term);
      }
      dWeights.data[n * K + k] = sum;
      mWeights.data[n * K + k] = mag;
    }
  }
  // d_X = d_gates.mm(weights); d_old_h, d_input = d_X[:, :S], d_X[:, S:]
  const dOldH = matrix(B, S), dInput = matrix(B, F), mOldH = matrix(B, S), mInput = matrix(B, F);
  for (let b = 0; b < B; b++) {
    for (let k = 0; k < K; k++) {
      let sum = 0, mag = 0;
      for (let n = 0; n < 3 * S; n++) {
        const term = dGates.data[b * 3 * S + n]! * weights.data[n * K + k]!;
        sum += term;
        mag += Math.abs(term);
      }
      if (k < S) {
        dOldH.data[b * S + k] = sum;
        mOldH.data[b * S + k] = mag;
      } else {
        dInput.data[b * F + k - S] = sum;
        mInput.data[b * F + k - S] = mag;
      }
    }
  }
  return {
    dOldH, dInput, dWeights, dBias, dOldCell,
    magnitudes: { dOldH: mOldH, dInput: mInput, dWeights: mWeights, dBias: mBias },
  };
}

/** referenceForwardMatrices on tensors (any dtype, device and strides), computed in float64. */
export function referenceForward(input: Tensor, weights: Tensor, bias: Tensor, oldH: Tensor, oldCell: Tensor): ReferenceForward {
  return referenceForwardMatrices(toMatrix(input), toMatrix(weights), toMatrix(bias), toMatrix(oldH), toMatrix(oldCell));
}

/** referenceBackwardMatrices on tensors, computed in float64. */
export function referenceBackward(
  gradH: Tensor, gradCell: Tensor, newCell: Tensor, inputGate: Tensor, outputGate: Tensor,
  candidateCell: Tensor, X: Tensor, gateWeights: Tensor, weights: Tensor,
): ReferenceBackward {
  return referenceBackwardMatrices(
    toMatrix(gradH), toMatrix(gradCell), toMatrix(newCell), toMatrix(inputGate), toMatrix(outputGate),
    toMatrix(candidateCell), toMatrix(X), toMatrix(gateWeights), toMatrix(weights),
  );
}

/** ||a - b|| / ||b|| in the Frobenius norm (0 when both are zero), as the tutorial's check compares. */
export function relativeError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) {
    throw new LLTMError("SHAPE_MISMATCH", `relativeError: lengths ${a.length} and ${b.length} differ`);
  }
  let diff = 0, norm = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    diff += d * d;
    norm += b[i]! * b[i]!;
  }
  if (norm === 0) return Math.sqrt(diff);
  return Math.sqrt(diff / norm);
}
