/**
 * The float64 reference of a whole sequence: the reference cell
 * (ts/reference.ts) step by step forward, then backpropagation through time
 * step by step in reverse, adding the parameters' gradients over the steps.
 *
 * The backward uses the reference cell's slopes, in forms that stay accurate
 * where they saturate (sigma(g) sigma(-g), 1 / cosh(c)^2, e^g), unlike the
 * tutorial's sigma (1 - sigma) and 1 - tanh(c)^2: over a sequence the cell
 * grows to where 1 - tanh(c)^2 keeps only the digits float64 has left after
 * cancelling (1e-8 relative at |c| = 10), which is no reference for 1e-12.
 *
 * With per-sample lengths, sample b's steps from lengths[b] on carry its
 * state, output zeros and pass no gradient (the cell's gradient passes
 * unchanged); gradLastH reaches its step lengths[b] - 1.
 */
import { referenceForwardMatrices, type Tensor, toMatrix } from "../ts/index.ts";
import { eluSlope, sigmoidSlope, tanhSlope } from "../ts/reference.ts";

export interface ReferenceSequence {
  outputs: Float64Array; // [T, B, S]
  lastH: Float64Array;
  lastCell: Float64Array;
  dInputs: Float64Array; // [T, B, F]
  dWeights: Float64Array;
  dBias: Float64Array;
  dH0: Float64Array;
  dC0: Float64Array;
  /**
   * Per gradient, the same computation on the absolute values of every term
   * (|dG| |W| for |dG W|, and so on through the steps): the scale rounding
   * errors are proportional to, which the gradient itself is not where its
   * terms cancel.
   */
  magnitudes: Record<Gradient, Float64Array>;
  /**
   * The forward's counterparts: a cell's magnitude is its start's plus every
   * step's |z i| (the terms it sums), an h's |o| times its cell's (which
   * bounds |tanh(c) o|). Where a cell's terms cancel, its rounding errors
   * stay at the terms' scale while the cell itself goes to zero.
   */
  forwardMagnitudes: Record<"outputs" | "lastH" | "lastCell", Float64Array>;
}

export type Gradient = "dInputs" | "dWeights" | "dBias" | "dH0" | "dC0";

const values = (t: Tensor) => Float64Array.from(t.toTypedArray());

/** Gradients that are omitted count as zeros; omitted lengths are T for every sample. */
export function referenceSequence(
  inputs: Tensor, weights: Tensor, bias: Tensor, h0: Tensor, c0: Tensor,
  gradOutputs?: Tensor, gradLastH?: Tensor, gradLastCell?: Tensor, lengths?: readonly number[],
): ReferenceSequence {
  const [T, B, F] = inputs.shape as [number, number, number];
  const length = (row: number) => lengths?.[row] ?? T;
  const S = h0.shape[1]!, K = S + F, G = 3 * S;
  const x = values(inputs);
  const W = toMatrix(weights), b = toMatrix(bias);
  const steps = [];
  let h = toMatrix(h0), c = toMatrix(c0);
  const outputs = new Float64Array(T * B * S), mOutputs = new Float64Array(T * B * S);
  const mCell = c.data.map(Math.abs), mH = h.data.map(Math.abs);
  for (let t = 0; t < T; t++) {
    const step = referenceForwardMatrices({ rows: B, cols: F, data: x.subarray(t * B * F, (t + 1) * B * F) }, W, b, h, c);
    for (let row = 0; row < B; row++) {
      if (t < length(row)) {
        for (let e = row * S; e < (row + 1) * S; e++) {
          mCell[e] = mCell[e]! + Math.abs(step.candidateCell.data[e]! * step.inputGate.data[e]!);
          mH[e] = Math.abs(step.outputGate.data[e]!) * mCell[e]!;
        }
        mOutputs.set(mH.subarray(row * S, (row + 1) * S), (t * B + row) * S);
        continue;
      }
      step.newH.data.set(h.data.subarray(row * S, (row + 1) * S), row * S);
      step.newCell.data.set(c.data.subarray(row * S, (row + 1) * S), row * S);
    }
    steps.push(step);
    outputs.set(step.newH.data, t * B * S);
    for (let row = 0; row < B; row++) if (t >= length(row)) outputs.fill(0, (t * B + row) * S, (t * B + row + 1) * S);
    h = step.newH;
    c = step.newCell;
  }
  const gOut = gradOutputs ? values(gradOutputs) : new Float64Array(T * B * S);
  const gLastH = gradLastH ? values(gradLastH) : new Float64Array(B * S);
  let dh = new Float64Array(B * S);
  const dc = gradLastCell ? values(gradLastCell) : new Float64Array(B * S);
  const dInputs = new Float64Array(T * B * F);
  const dWeights = new Float64Array(G * K), dBias = new Float64Array(G);
  const dGates = new Float64Array(B * G);
  // The magnitudes' counterparts (m*).
  const abs = (a: Float64Array) => a.map(Math.abs);
  const mgLastH = abs(gLastH);
  let mdh = new Float64Array(B * S);
  const mdc = abs(dc), mgOut = abs(gOut), mW = abs(W.data);
  const mdInputs = new Float64Array(T * B * F), mdWeights = new Float64Array(G * K), mdBias = new Float64Array(G);
  const mdGates = new Float64Array(B * G);
  for (let t = T - 1; t >= 0; t--) {
    const s = steps[t]!;
    for (let e = 0; e < B * S; e++) {
      const row = Math.floor(e / S), u = e % S, g = row * G;
      if (t >= length(row)) {
        for (const at of [g + u, g + S + u, g + 2 * S + u]) dGates[at] = mdGates[at] = 0;
        continue;
      }
      const last = t === length(row) - 1;
      const gradH = dh[e]! + gOut[t * B * S + e]! + (last ? gLastH[e]! : 0);
      const i = s.inputGate.data[e]!, o = s.outputGate.data[e]!, z = s.candidateCell.data[e]!;
      const cell = s.newCell.data[e]!;
      const dCell = tanhSlope(cell) * o * gradH + dc[e]!;
      dc[e] = dCell;
      const f0 = z * sigmoidSlope(s.gateWeights.data[g + u]!);
      const f1 = Math.tanh(cell) * sigmoidSlope(s.gateWeights.data[g + S + u]!);
      const f2 = i * eluSlope(s.gateWeights.data[g + 2 * S + u]!);
      dGates[g + u] = f0 * dCell;
      dGates[g + S + u] = f1 * gradH;
      dGates[g + 2 * S + u] = f2 * dCell;
      const mGradH = mdh[e]! + mgOut[t * B * S + e]! + (last ? mgLastH[e]! : 0);
      const mCell = Math.abs(tanhSlope(cell) * o) * mGradH + mdc[e]!;
      mdc[e] = mCell;
      mdGates[g + u] = Math.abs(f0) * mCell;
      mdGates[g + S + u] = Math.abs(f1) * mGradH;
      mdGates[g + 2 * S + u] = Math.abs(f2) * mCell;
    }
    // dW += dG^T X, db += sum dG, dX = dG W (dh_{t-1} = its first S columns, dx_t the rest).
    const next = new Float64Array(B * S), mnext = new Float64Array(B * S);
    for (let row = 0; row < B; row++) {
      for (let n = 0; n < G; n++) {
        const d = dGates[row * G + n]!, md = mdGates[row * G + n]!;
        dBias[n] = dBias[n]! + d;
        mdBias[n] = mdBias[n]! + md;
        for (let k = 0; k < K; k++) {
          const x = s.X.data[row * K + k]!;
          dWeights[n * K + k] = dWeights[n * K + k]! + d * x;
          mdWeights[n * K + k] = mdWeights[n * K + k]! + md * Math.abs(x);
        }
      }
      for (let k = 0; k < K; k++) {
        let sum = 0, msum = 0;
        for (let n = 0; n < G; n++) {
          sum += dGates[row * G + n]! * W.data[n * K + k]!;
          msum += mdGates[row * G + n]! * mW[n * K + k]!;
        }
        if (k < S) {
          next[row * S + k] = sum;
          mnext[row * S + k] = msum;
        } else {
          dInputs[(t * B + row) * F + k - S] = sum;
          mdInputs[(t * B + row) * F + k - S] = msum;
        }
      }
    }
    dh = next;
    mdh = mnext;
  }
  return {
    outputs, lastH: h.data, lastCell: c.data, dInputs, dWeights, dBias, dH0: dh, dC0: dc,
    magnitudes: { dInputs: mdInputs, dWeights: mdWeights, dBias: mdBias, dH0: mdh, dC0: mdc },
    forwardMagnitudes: { outputs: mOutputs, lastH: mH, lastCell: mCell },
  };
}
