/**
 * The stacked ops against the same layers run one sequence call each (tests/stacked.test.ts, and
 * tests/wavefront_child.ts for the wavefront): a stack's random parameters laid out as params, and the comparison of
 * every result and gradient.
 */
import fc from "fast-check";
import { type DType, lltmSequenceBackward, lltmSequenceForward, lltmStackedBackward, lltmStackedForward, Tensor } from "../ts/index.ts";
import { assert } from "./harness.ts";

export type Device = "cpu" | "cuda";

export interface Stack {
  T: number;
  B: number;
  F: number;
  S: number;
  L: number;
  /** Directions, 1 or 2. */
  D: number;
  align: number;
  /** Part k = d·L + l: direction d's layer l, in params' order. */
  weights: Float64Array[];
  biases: Float64Array[];
}

/** The offsets of each part's weights and bias in params, and params' size, as lltm_ops.def lays them out. */
export function layout(s: Stack): { weights: number[]; biases: number[]; total: number } {
  const up = (n: number) => Math.ceil(n / s.align) * s.align;
  const weights: number[] = [], biases: number[] = [];
  let at = 0;
  for (let k = 0; k < s.L * s.D; k++) {
    weights.push(at);
    at = up(at + s.weights[k]!.length);
    biases.push(at);
    at = up(at + 3 * s.S);
  }
  return { weights, biases, total: biases[s.L * s.D - 1]! + 3 * s.S };
}

export function stack(T: number, B: number, F: number, S: number, L: number, D: number, align: number, seed: number): Stack {
  const rng = fc.sample(fc.double({ min: -1, max: 1, noNaN: true }), { seed, numRuns: 1 << 16 });
  let k = 0;
  const next = (scale: number) => rng[k++ % rng.length]! * scale;
  const width = (l: number) => S + (l === 0 ? F : D * S);
  const weights = Array.from({ length: L * D }, (_, p) => {
    const w = width(p % L);
    return Float64Array.from({ length: 3 * S * w }, () => next(1 / Math.sqrt(w)));
  });
  const biases = Array.from({ length: L * D }, () => Float64Array.from({ length: 3 * S }, () => next(0.5)));
  return { T, B, F, S, L, D, align, weights, biases };
}

export function flatParams(s: Stack, dtype: DType, device: Device): Tensor {
  const at = layout(s);
  const flat = new Float64Array(at.total);
  s.weights.forEach((w, k) => flat.set(w, at.weights[k]!));
  s.biases.forEach((b, k) => flat.set(b, at.biases[k]!));
  return Tensor.fromTypedArray(dtype === "float64" ? flat : Float32Array.from(flat), [at.total], { dtype, device });
}

export function tensor(values: ArrayLike<number>, shape: number[], dtype: DType, device: Device): Tensor {
  return Tensor.fromTypedArray(dtype === "float64" ? Float64Array.from(values) : Float32Array.from(values), shape, { dtype, device });
}

export function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: number, what: string): void {
  assert(actual.length === expected.length, `${what}: ${actual.length} values, expected ${expected.length}`);
  let scale = 0;
  for (let i = 0; i < expected.length; i++) scale = Math.max(scale, Math.abs(expected[i]!));
  for (let i = 0; i < expected.length; i++) {
    const d = Math.abs(actual[i]! - expected[i]!);
    assert(d <= tol * Math.max(1, scale), `${what}[${i}]: ${actual[i]} against ${expected[i]} (scale ${scale})`);
  }
}

/** [T, B, X] values with sample b's first lengths[b] steps reversed (the rest in place), on the host. */
export function reversedSteps(x: ArrayLike<number>, T: number, B: number, X: number, lengths: Int32Array): Float64Array {
  const y = new Float64Array(T * B * X);
  for (let t = 0; t < T; t++) {
    for (let b = 0; b < B; b++) {
      const from = t < lengths[b]! ? lengths[b]! - 1 - t : t;
      for (let e = 0; e < X; e++) y[(t * B + b) * X + e] = x[(from * B + b) * X + e]!;
    }
  }
  return y;
}

/** Direction d's [T, B, S] of [T, B, D·S] values, or the directions' [T, B, S] values joined. */
export function directionOf(y: ArrayLike<number>, rows: number, D: number, S: number, d: number): Float64Array {
  return Float64Array.from({ length: rows * S }, (_, i) => y[Math.floor(i / S) * D * S + d * S + (i % S)]!);
}
export function joined(parts: readonly ArrayLike<number>[], rows: number, S: number): Float64Array {
  const D = parts.length;
  return Float64Array.from({ length: rows * D * S }, (_, i) => parts[Math.floor(i / S) % D]![Math.floor(i / (D * S)) * S + (i % S)]!);
}

/**
 * Runs the stack both ways and compares every result: the stacked ops, and each layer and direction as one
 * sequence call, the second direction on its input reversed on the host and its outputs put back in order.
 */
export function check(s: Stack, dtype: DType, device: Device, withLengths: boolean, seed: number): void {
  const { T, B, F, S, L, D } = s;
  const tol = dtype === "float64" ? 1e-12 : 1e-5;
  const values = (n: number, salt: number) => fc.sample(fc.double({ min: -1, max: 1, noNaN: true }), { seed: seed + salt, numRuns: n });
  const xv = values(T * B * F, 1), gOutV = values(T * B * D * S, 4);
  using x = tensor(xv, [T, B, F], dtype, device);
  using h0 = tensor(values(L * D * B * S, 2), [L * D, B, S], dtype, device);
  using c0 = tensor(values(L * D * B * S, 3), [L * D, B, S], dtype, device);
  using gOut = tensor(gOutV, [T, B, D * S], dtype, device);
  using gH = tensor(values(L * D * B * S, 5), [L * D, B, S], dtype, device);
  using gC = tensor(values(L * D * B * S, 6), [L * D, B, S], dtype, device);
  const lengthValues = Int32Array.from({ length: B }, (_, b) => (withLengths ? 1 + ((b * 7 + seed) % T) : T));
  using lengths = withLengths ? Tensor.fromTypedArray(lengthValues, [B], { dtype: "int32", device }) : undefined;
  using params = flatParams(s, dtype, device);
  const options = { lengths, align: s.align, bidirectional: D === 2 };

  using stacked = lltmStackedForward(x, params, h0, c0, options);
  using grads = lltmStackedBackward(gOut, gH, gC, stacked.reserve!, x, params, h0, options);

  // Layer by layer: the forward up, then the backward down, each layer's input gradient the layer below's
  // output gradient.
  const at = layout(s);
  const reverse = (v: ArrayLike<number>, X: number) => reversedSteps(v, T, B, X, lengthValues);
  const state = (t: Tensor, k: number) => t.narrow(0, k, 1).reshape([B, S]);
  const runs: { x: Tensor; w: Tensor; b: Tensor; h0: Tensor; f: ReturnType<typeof lltmSequenceForward>; width: number }[] = [];
  let input: ArrayLike<number> = xv;
  for (let l = 0; l < L; l++) {
    const width = l === 0 ? F : D * S;
    const outs: ArrayLike<number>[] = [];
    for (let d = 0; d < D; d++) {
      const p = d * L + l, k = l * D + d;
      const w = tensor(s.weights[p]!, [3 * S, S + width], dtype, device), b = tensor(s.biases[p]!, [3 * S], dtype, device);
      const lx = tensor(d === 0 ? input : reverse(input, width), [T, B, width], dtype, device);
      const lh0 = state(h0, k);
      using lc0 = state(c0, k);
      const f = lltmSequenceForward(lx, w, b, lh0, lc0, { lengths });
      assertClose(stacked.lastH.narrow(0, k, 1).toTypedArray(), f.lastH.toTypedArray(), tol, `last_h[${k}]`);
      assertClose(stacked.lastCell.narrow(0, k, 1).toTypedArray(), f.lastCell.toTypedArray(), tol, `last_cell[${k}]`);
      const out = f.outputs.toTypedArray();
      outs.push(d === 0 ? out : reverse(out, S));
      runs.push({ x: lx, w, b, h0: lh0, f, width });
    }
    input = D === 1 ? outs[0]! : joined(outs, T * B, S);
  }
  assertClose(stacked.outputs.toTypedArray(), input, tol, "outputs");
  const dParams = grads.dParams!.toTypedArray();
  let grad: ArrayLike<number> = gOutV;
  for (let l = L - 1; l >= 0; l--) {
    const width = l === 0 ? F : D * S;
    const dx = new Float64Array(T * B * width);
    for (let d = 0; d < D; d++) {
      const p = d * L + l, k = l * D + d;
      const { x: lx, w, b, h0: lh0, f } = runs[k]!;
      const gd = D === 1 ? grad : directionOf(grad, T * B, D, S, d);
      using lg = tensor(d === 0 ? gd : reverse(gd, S), [T, B, S], dtype, device);
      using lgh = state(gH, k);
      using lgc = state(gC, k);
      using g = lltmSequenceBackward(lg, lgh, lgc, f.reserve!, lx, w, lh0, { lengths });
      assertClose(dParams.subarray(at.weights[p]!, at.weights[p]! + w.numel), g.dWeights.toTypedArray(), tol, `d_weights[${l}, ${d}]`);
      assertClose(dParams.subarray(at.biases[p]!, at.biases[p]! + 3 * S), g.dBias.toTypedArray(), tol, `d_bias[${l}, ${d}]`);
      assertClose(grads.dH0.narrow(0, k, 1).toTypedArray(), g.dH0.toTypedArray(), tol, `d_h0[${k}]`);
      assertClose(grads.dC0.narrow(0, k, 1).toTypedArray(), g.dC0.toTypedArray(), tol, `d_c0[${k}]`);
      const part = g.dInputs.toTypedArray();
      const inOrder = d === 0 ? part : reverse(part, width);
      for (let i = 0; i < dx.length; i++) dx[i]! += inOrder[i]!;
      for (const t of [lx, w, b, lh0]) t.dispose();
      f.dispose();
    }
    grad = dx;
  }
  assertClose(grads.dInputs!.toTypedArray(), grad, tol, "d_inputs");
}
