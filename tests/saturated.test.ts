/**
 * The backward where the gates and the cell saturate (float64): gates of
 * |G| 20 to 40 and new cells of |c'| 15 to 50, where the tutorial's slopes
 * i (1 - i) and 1 - tanh(c')^2 keep few digits or none (i rounds to 1 from
 * G = 37 on; at c' = 15, 1 - tanh^2 keeps three). The per-step path (native
 * and the TypeScript reference) and the sequence engine (one step) must give
 * the analytic gradient, its slopes written here in forms of their own:
 * sigma'(g) = 1 / (2 + 2 cosh g), tanh'(c) = (2 / (e^c + e^-c))^2.
 *
 * Elementwise, relative 1e-12: d_old_cell and d_bias exactly so (the inputs
 * are chosen so that a unit's gate gradients share their sign over the batch,
 * so d_bias's sums cancel nothing); the products with X and W (d_weights,
 * d_old_h, d_input) within 1e-12 of the sum of their terms' magnitudes,
 * since their terms cancel and rounding is proportional to those.
 */
import {
  type DeviceLike, lltmBackward, lltmForward, lltmSequenceBackward, lltmSequenceForward, referenceBackward, Tensor,
} from "../ts/index.ts";
import { assert, cudaSkipReason, test } from "./harness.ts";

const B = 3, F = 4, S = 6, K = S + F, G = 3 * S;
const TOLERANCE = 1e-12;

/** A small deterministic generator (mulberry32), values in [0, 1). */
function uniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Case {
  input: Float64Array; // [B, F]
  weights: Float64Array; // [3S, K]
  bias: Float64Array; // [3S]
  h0: Float64Array; // [B, S]
  c0: Float64Array; // [B, S]
  gradH: Float64Array; // [B, S]
  gradCell: Float64Array; // [B, S]
}

/**
 * Small weights, so that the bias sets each gate: the input gate mostly
 * saturated high (where i (1 - i) fails), the output gate both ways, the
 * candidate's gate and the old cell with one sign per unit (so the new cell
 * does too, |c'| >= 15). gradH > 0 and gradCell >= 0 (0 in row 0, where
 * d_cell is tanh's slope alone), so each unit's gate gradients share a sign.
 */
function saturatedCase(seed: number): Case {
  const r = uniform(seed);
  const sign = (u: number) => (u % 2 === 0 ? 1 : -1);
  const gate0 = [38, 25, -30, 33, 21, -27], gate1 = [30, -24, 36, 22, -35, 28];
  const bias = new Float64Array(G);
  for (let u = 0; u < S; u++) {
    bias[u] = gate0[u % 6]! + r();
    bias[S + u] = gate1[u % 6]! + r();
    bias[2 * S + u] = sign(u) * (20 + 10 * r());
  }
  const gaussianish = () => r() + r() + r() - 1.5;
  return {
    input: Float64Array.from({ length: B * F }, gaussianish),
    weights: Float64Array.from({ length: G * K }, () => 0.05 * gaussianish()),
    bias,
    h0: Float64Array.from({ length: B * S }, gaussianish),
    c0: Float64Array.from({ length: B * S }, (_, e) => sign(e % S) * (15 + 3 * r())),
    gradH: Float64Array.from({ length: B * S }, () => 0.5 + r()),
    gradCell: Float64Array.from({ length: B * S }, (_, e) => (e < S ? 0 : 0.5 + r())),
  };
}

const sigmoidSlope = (g: number) => 1 / (2 + 2 * Math.cosh(g));
const tanhSlope = (c: number) => (2 / (Math.exp(c) + Math.exp(-c))) ** 2;
const eluSlope = (g: number) => (g > 0 ? 1 : Math.exp(g));

interface Expected {
  dOldCell: Float64Array;
  dGates: Float64Array; // [B, 3S]
}

/** The analytic gate gradients from the forward's saved state. */
function analytic(c: Case, newCell: Float64Array, inputGate: Float64Array, outputGate: Float64Array, candidate: Float64Array, gates: Float64Array): Expected {
  const dOldCell = new Float64Array(B * S), dGates = new Float64Array(B * G);
  for (let b = 0; b < B; b++) {
    for (let u = 0; u < S; u++) {
      const e = b * S + u, g = b * G;
      const cell = newCell[e]!, gh = c.gradH[e]!;
      const dCell = tanhSlope(cell) * outputGate[e]! * gh + c.gradCell[e]!;
      dOldCell[e] = dCell;
      dGates[g + u] = candidate[e]! * dCell * sigmoidSlope(gates[g + u]!);
      dGates[g + S + u] = Math.tanh(cell) * gh * sigmoidSlope(gates[g + S + u]!);
      dGates[g + 2 * S + u] = inputGate[e]! * dCell * eluSlope(gates[g + 2 * S + u]!);
    }
  }
  return { dOldCell, dGates };
}

interface Gradients {
  dOldCell: ArrayLike<number>;
  dBias: ArrayLike<number>;
  dWeights: ArrayLike<number>;
  dOldH: ArrayLike<number>;
  dInput: ArrayLike<number>;
}

function checkElementwise(what: string, got: ArrayLike<number>, expected: ArrayLike<number>): void {
  for (let i = 0; i < expected.length; i++) {
    const want = expected[i]!, err = Math.abs(got[i]! - want) / Math.abs(want);
    assert(want !== 0 && err <= TOLERANCE, `${what}[${i}]: ${got[i]} against ${want}, relative error ${err}`);
  }
}

/** |got - sum of terms| within TOLERANCE of the sum of the terms' magnitudes, element by element. */
function checkSums(what: string, got: ArrayLike<number>, sums: Float64Array, magnitudes: Float64Array): void {
  for (let i = 0; i < sums.length; i++) {
    const err = Math.abs(got[i]! - sums[i]!);
    assert(err <= TOLERANCE * magnitudes[i]!, `${what}[${i}]: ${got[i]} against ${sums[i]}, error ${err} > 1e-12 x ${magnitudes[i]}`);
  }
}

function checkGradients(what: string, got: Gradients, c: Case, X: Float64Array, e: Expected): void {
  checkElementwise(`${what} dOldCell`, got.dOldCell, e.dOldCell);
  const dBias = new Float64Array(G);
  for (let b = 0; b < B; b++) for (let n = 0; n < G; n++) dBias[n] = dBias[n]! + e.dGates[b * G + n]!;
  checkElementwise(`${what} dBias`, got.dBias, dBias);
  const dW = new Float64Array(G * K), dWm = new Float64Array(G * K);
  for (let n = 0; n < G; n++) {
    for (let k = 0; k < K; k++) {
      for (let b = 0; b < B; b++) {
        const term = e.dGates[b * G + n]! * X[b * K + k]!;
        dW[n * K + k] = dW[n * K + k]! + term;
        dWm[n * K + k] = dWm[n * K + k]! + Math.abs(term);
      }
    }
  }
  checkSums(`${what} dWeights`, got.dWeights, dW, dWm);
  const dX = new Float64Array(B * K), dXm = new Float64Array(B * K);
  for (let b = 0; b < B; b++) {
    for (let k = 0; k < K; k++) {
      for (let n = 0; n < G; n++) {
        const term = e.dGates[b * G + n]! * c.weights[n * K + k]!;
        dX[b * K + k] = dX[b * K + k]! + term;
        dXm[b * K + k] = dXm[b * K + k]! + Math.abs(term);
      }
    }
  }
  const columns = (m: Float64Array, from: number, to: number) => {
    const out = new Float64Array(B * (to - from));
    for (let b = 0; b < B; b++) for (let k = from; k < to; k++) out[b * (to - from) + k - from] = m[b * K + k]!;
    return out;
  };
  checkSums(`${what} dOldH`, got.dOldH, columns(dX, 0, S), columns(dXm, 0, S));
  checkSums(`${what} dInput`, got.dInput, columns(dX, S, K), columns(dXm, S, K));
}

const values = (t: Tensor) => Float64Array.from(t.toTypedArray());

function saturatedBackward(device: DeviceLike): void {
  for (const seed of [1, 2, 3]) {
    const c = saturatedCase(seed);
    const on = (data: Float64Array, shape: number[]) => Tensor.fromTypedArray(data, shape, { device });
    using input = on(c.input, [B, F]);
    using weights = on(c.weights, [G, K]);
    using bias = on(c.bias, [G]);
    using h0 = on(c.h0, [B, S]);
    using c0 = on(c.c0, [B, S]);
    using gradH = on(c.gradH, [B, S]);
    using gradCell = on(c.gradCell, [B, S]);
    using fw = lltmForward(input, weights, bias, h0, c0);
    const gates = values(fw.gateWeights), newCell = values(fw.newCell), X = values(fw.X);
    const expected = analytic(c, newCell, values(fw.inputGate), values(fw.outputGate), values(fw.candidateCell), gates);
    // The inputs do what they are for: gates and cells saturated.
    assert(gates.every((g) => Math.abs(g) >= 19), `seed ${seed}: a gate below saturation`);
    assert(newCell.every((v) => Math.abs(v) >= 14), `seed ${seed}: a new cell below saturation`);
    const where = `${device} seed ${seed}`;

    using step = lltmBackward(gradH, gradCell, fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights, weights);
    const stepGrads = {
      dOldCell: values(step.dOldCell), dBias: values(step.dBias), dWeights: values(step.dWeights), dOldH: values(step.dOldH),
      dInput: values(step.dInput),
    };
    checkGradients(`step (${where})`, stepGrads, c, X, expected);

    const ref = referenceBackward(gradH, gradCell, fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights, weights);
    checkGradients(`reference (${where})`, {
      dOldCell: ref.dOldCell.data, dBias: ref.dBias.data, dWeights: ref.dWeights.data, dOldH: ref.dOldH.data, dInput: ref.dInput.data,
    }, c, X, expected);

    // The sequence engine, one step: the same gradients, and the per-step path's to 1e-12.
    using inputs = on(c.input, [1, B, F]);
    using gradOutputs = on(c.gradH, [1, B, S]);
    using seq = lltmSequenceForward(inputs, weights, bias, h0, c0);
    using sg = lltmSequenceBackward(gradOutputs, undefined, gradCell, seq.reserve!, inputs, weights, h0);
    const seqGrads = {
      dOldCell: values(sg.dC0), dBias: values(sg.dBias), dWeights: values(sg.dWeights), dOldH: values(sg.dH0), dInput: values(sg.dInputs),
    };
    checkGradients(`sequence (${where})`, seqGrads, c, X, expected);
    checkElementwise(`step against sequence dOldCell (${where})`, stepGrads.dOldCell, seqGrads.dOldCell);
    checkElementwise(`step against sequence dBias (${where})`, stepGrads.dBias, seqGrads.dBias);
  }
}

test("saturated gates and cells: the step's backward, the reference and the sequence engine give the analytic gradient (CPU, float64)", () => {
  saturatedBackward("cpu");
});

test("saturated gates and cells: the step's backward, the reference and the sequence engine give the analytic gradient (CUDA, float64)", () => {
  saturatedBackward("cuda");
}, { skip: cudaSkipReason() });
