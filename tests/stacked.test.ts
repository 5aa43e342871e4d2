/**
 * The stacked ops (lltmStackedForward / lltmStackedBackward, csrc/lltm_ops.def's STACKED_*): L layers in one
 * native call each way against the same layers run one sequence call each (outputs, last states, every
 * gradient, the parameters' laid out as params), over sizes, layer counts, alignments, lengths and dtypes, on
 * the CPU and on CUDA where present; params' size and the reserve refused by name. The LLTM module takes them
 * once a fused optimizer holds its parameters, with the results and gradients of its layer-by-layer calls.
 */
import fc from "fast-check";
import {
  AdamW, add, type DType, LLTM, lltmSequenceBackward, lltmSequenceForward, lltmStackedBackward, lltmStackedForward, sum, Tensor,
} from "../ts/index.ts";
import * as native from "../ts/native/index.ts";
import { assert, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";
import { assertProperty } from "./sequence_helpers.ts";

type Device = "cpu" | "cuda";

interface Stack {
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
function layout(s: Stack): { weights: number[]; biases: number[]; total: number } {
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

function stack(T: number, B: number, F: number, S: number, L: number, D: number, align: number, seed: number): Stack {
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

function flatParams(s: Stack, dtype: DType, device: Device): Tensor {
  const at = layout(s);
  const flat = new Float64Array(at.total);
  s.weights.forEach((w, k) => flat.set(w, at.weights[k]!));
  s.biases.forEach((b, k) => flat.set(b, at.biases[k]!));
  return Tensor.fromTypedArray(dtype === "float64" ? flat : Float32Array.from(flat), [at.total], { dtype, device });
}

function tensor(values: ArrayLike<number>, shape: number[], dtype: DType, device: Device): Tensor {
  return Tensor.fromTypedArray(dtype === "float64" ? Float64Array.from(values) : Float32Array.from(values), shape, { dtype, device });
}

function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: number, what: string): void {
  assert(actual.length === expected.length, `${what}: ${actual.length} values, expected ${expected.length}`);
  let scale = 0;
  for (let i = 0; i < expected.length; i++) scale = Math.max(scale, Math.abs(expected[i]!));
  for (let i = 0; i < expected.length; i++) {
    const d = Math.abs(actual[i]! - expected[i]!);
    assert(d <= tol * Math.max(1, scale), `${what}[${i}]: ${actual[i]} against ${expected[i]} (scale ${scale})`);
  }
}

/** [T, B, X] values with sample b's first lengths[b] steps reversed (the rest in place), on the host. */
function reversedSteps(x: ArrayLike<number>, T: number, B: number, X: number, lengths: Int32Array): Float64Array {
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
function directionOf(y: ArrayLike<number>, rows: number, D: number, S: number, d: number): Float64Array {
  return Float64Array.from({ length: rows * S }, (_, i) => y[Math.floor(i / S) * D * S + d * S + (i % S)]!);
}
function joined(parts: readonly ArrayLike<number>[], rows: number, S: number): Float64Array {
  const D = parts.length;
  return Float64Array.from({ length: rows * D * S }, (_, i) => parts[Math.floor(i / S) % D]![Math.floor(i / (D * S)) * S + (i % S)]!);
}

/**
 * Runs the stack both ways and compares every result: the stacked ops, and each layer and direction as one
 * sequence call, the second direction on its input reversed on the host and its outputs put back in order.
 */
function check(s: Stack, dtype: DType, device: Device, withLengths: boolean, seed: number): void {
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

for (const device of ["cpu", "cuda"] as const) {
  const skip = device === "cuda" ? cudaSkipReason() : false;
  test(`${device}: lltmStackedForward and lltmStackedBackward match the layers and directions run one sequence call each`, () => {
    assertProperty(
      fc.property(
        fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 3 }), fc.constantFrom(1, 2), fc.constantFrom(1, 3, 16),
        fc.constantFrom<DType>("float64", "float32"), fc.boolean(), fc.integer({ min: 0, max: 1000 }),
        (T, B, F, S, L, D, align, dtype, withLengths, seed) => {
          check(stack(T, B, F, S, L, D, align, seed), dtype, device, withLengths, seed);
        },
      ),
      { numRuns: 16, seed: 19 },
    );
  }, { skip });
}

test("lltmStackedForward refuses params of the wrong size by name, a short reserve, and states of the wrong directions", () => {
  const s = stack(3, 2, 4, 5, 2, 1, 16, 1);
  using x = Tensor.zeros([3, 2, 4], { dtype: "float64" });
  using h0 = Tensor.zeros([2, 2, 5], { dtype: "float64" });
  using params = flatParams(s, "float64", "cpu");
  using short = params.narrow(0, 0, params.numel - 1);
  assertThrowsLLTM(() => lltmStackedForward(x, short, h0, h0, { align: 16 }), "SHAPE_MISMATCH", /lltmStackedForward: 'params' has shape \[\d+\]; L = 2 layers in D = 1 directions of S = 5 on F = 4 features, each part at a multiple of align = 16 elements, take \[\d+\]/);
  assertThrowsLLTM(() => lltmStackedForward(x, params, h0, h0, { align: 1 }), "SHAPE_MISMATCH", /'params' has shape/);
  using f = lltmStackedForward(x, params, h0, h0, { align: 16 });
  using small = f.reserve!.narrow(0, 0, 8);
  assertThrowsLLTM(() => lltmStackedBackward(undefined, undefined, undefined, small, x, params, h0, { align: 16 }), "INVALID_ARGUMENT", /lltmStackedBackward: 'reserve' has \d+ bytes but L = 2, D = 1, T = 3, B = 2, S = 5 needs \d+ \(lltm_buffer_bytes\)/);
  // Two directions take [L·D, B, S] states: 3 layer states cannot be split into 2 directions.
  using h3 = Tensor.zeros([3, 2, 5], { dtype: "float64" });
  assertThrowsLLTM(() => lltmStackedForward(x, params, h3, h3, { align: 16, bidirectional: true }), "SHAPE_MISMATCH", /lltmStackedForward: 'h0' has shape \[3, 2, 5\]; expected \[L·D, B, S\] with D = 2 directions \(bidirectional\)/);
});

for (const device of ["cpu", "cuda"] as const) {
  const skip = device === "cuda" ? cudaSkipReason() : false;
  test(`${device}: LLTM runs its layers (and both directions) in one stacked call once a fused optimizer holds them, as it did layer by layer`, () => {
    for (const bidirectional of [false, true]) moduleStacks(device, bidirectional);
  }, { skip });
}

/** An LLTM whose layers a fused AdamW holds against an unfused twin: one stacked call, the same results and gradients. */
function moduleStacks(device: Device, bidirectional: boolean): void {
  const dtype = "float64";
  const make = () => new LLTM(5, 7, { layers: 3, bidirectional, seed: 4, device }).to(dtype);
  using plain = make();
  using fused = make();
  using optimizer = new AdamW(fused.namedParameters(), { fused: true });
  optimizer.zeroGrad();
  using x = Tensor.randn([6, 3, 5], { dtype, seed: 9, device });
  const run = (model: LLTM) => {
    const xi = x.detach().requiresGrad_();
    using out = model.forward(xi, undefined, { lengths: [6, 2, 4] });
    using total = sum(out.output);
    using hs = sum(out.h);
    using loss = add(total, hs);
    const values = { output: out.output.toTypedArray(), h: out.h.toTypedArray(), c: out.c.toTypedArray() };
    loss.backward();
    const result = { ...values, dx: xi.grad!.toTypedArray(), grads: model.parameters().map((p) => p.grad!.toTypedArray()) };
    xi.dispose();
    return result;
  };
  const stackedRuns = () => native.runCount(native.op("STACKED_FORWARD"));
  const before = stackedRuns();
  const a = run(plain);
  assert(stackedRuns() === before, `the plain module ran a stacked call (bidirectional ${bidirectional})`);
  const b = run(fused);
  assert(stackedRuns() === before + 1, `the fused module did not run one stacked call (bidirectional ${bidirectional})`);
  assertClose(b.output, a.output, 1e-12, "output");
  assertClose(b.h, a.h, 1e-12, "h");
  assertClose(b.c, a.c, 1e-12, "c");
  assertClose(b.dx, a.dx, 1e-12, "the input's gradient");
  a.grads.forEach((g, i) => assertClose(b.grads[i]!, g, 1e-12, `parameter ${i}'s gradient`));
}

for (const D of [1, 2]) {
  test(`lltmStackedBackward matches central differences of lltmStackedForward in float64 (${D} direction${D === 2 ? "s" : ""}), lengths and padding included`, () => {
    const s = stack(3, 2, 2, 3, 2, D, 4, 7);
    const { T, B, F, S, L } = s;
    const draw = (n: number, salt: number) => Float64Array.from(fc.sample(fc.double({ min: -1, max: 1, noNaN: true }), { seed: 40 + salt, numRuns: n }));
    const at = layout(s);
    const p = new Float64Array(at.total);
    s.weights.forEach((w, k) => p.set(w, at.weights[k]!));
    s.biases.forEach((b, k) => p.set(b, at.biases[k]!));
    const values = { params: p, inputs: draw(T * B * F, 1), h0: draw(L * D * B * S, 2), c0: draw(L * D * B * S, 3) };
    const shapes = { params: [at.total], inputs: [T, B, F], h0: [L * D, B, S], c0: [L * D, B, S] };
    const g = { out: draw(T * B * D * S, 4), h: draw(L * D * B * S, 5), c: draw(L * D * B * S, 6) };
    const bidirectional = D === 2;
    using lengths = Tensor.fromTypedArray(Int32Array.from([3, 2]), [B], { dtype: "int32" });
    const make = (k: keyof typeof values) => Tensor.fromTypedArray(values[k], shapes[k]);
    const dot = (t: Tensor, w: Float64Array) => (t.toTypedArray() as Float64Array).reduce((a, v, i) => a + v * w[i]!, 0);
    const loss = () => {
      using params = make("params"), inputs = make("inputs"), h0 = make("h0"), c0 = make("c0");
      using f = lltmStackedForward(inputs, params, h0, c0, { training: false, lengths, align: s.align, bidirectional });
      return dot(f.outputs, g.out) + dot(f.lastH, g.h) + dot(f.lastCell, g.c);
    };
    using params = make("params"), inputs = make("inputs"), h0 = make("h0"), c0 = make("c0");
    using f = lltmStackedForward(inputs, params, h0, c0, { lengths, align: s.align, bidirectional });
    using gOut = Tensor.fromTypedArray(g.out, [T, B, D * S]), gH = Tensor.fromTypedArray(g.h, [L * D, B, S]), gC = Tensor.fromTypedArray(g.c, [L * D, B, S]);
    using grads = lltmStackedBackward(gOut, gH, gC, f.reserve!, inputs, params, h0, { lengths, align: s.align, bidirectional });
    const analytic = { params: grads.dParams!, inputs: grads.dInputs!, h0: grads.dH0, c0: grads.dC0 };
    const padding = new Set<number>();
    for (let k = 0; k < L * D; k++) {
      for (let i = at.weights[k]! + s.weights[k]!.length; i < at.biases[k]!; i++) padding.add(i);
      for (let i = at.biases[k]! + 3 * S; i < (k + 1 < L * D ? at.weights[k + 1]! : at.total); i++) padding.add(i);
    }
    const eps = 1e-6;
    for (const k of Object.keys(values) as (keyof typeof values)[]) {
      const v = values[k], a = analytic[k].toTypedArray();
      for (let i = 0; i < v.length; i++) {
        if (k === "params" && padding.has(i)) continue; // between parts: no parameter, a gradient nobody reads
        const keep = v[i]!;
        v[i] = keep + eps;
        const up = loss();
        v[i] = keep - eps;
        const down = loss();
        v[i] = keep;
        const numeric = (up - down) / (2 * eps);
        // As the char LM's check: central differences within 1e-6 of the gradient's scale (eps² in the curvature,
        // the loss's rounding / eps, and the kernels' own float64 rounding over a few hundred terms).
        assert(Math.abs(a[i]! - numeric) <= 1e-6 * Math.max(1, Math.abs(numeric)), `${k}[${i}]: ${a[i]} against ${numeric}`);
      }
    }
  });
}
