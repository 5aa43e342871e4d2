/**
 * Side work on CUDA (cuda/runtime/side_work.h): the sequence backward's
 * weight gradients, and linear's where d_x is asked for too, run on a second
 * stream after the call returns. An op that
 * overwrites them waits for them; a block freed meanwhile (the inputs those
 * products read) is not handed out again before they are done; a capture
 * records them and joins them; a read sees them. Each check would see the
 * products' results mixed with later work if its rule were broken: the
 * products of a 64-step, 512-state backward take tens of microseconds, the
 * later work a few.
 */
import { compileStep, linearBackward, lltmSequenceBackward, lltmSequenceBackwardAccumulate, lltmSequenceForward, scale, Tensor } from "../ts/index.ts";
import { assert, cudaSkipReason, test } from "./harness.ts";

const skip = cudaSkipReason();
const T = 64, B = 64, F = 512, S = 512;

interface Problem {
  x: Tensor;
  weights: Tensor;
  bias: Tensor;
  h0: Tensor;
  c0: Tensor;
  gradOutputs: Tensor;
  [Symbol.dispose](): void;
}

function problem(seed: number): Problem {
  const o = { device: "cuda" as const, seed };
  const x = Tensor.randn([T, B, F], o);
  using unscaled = Tensor.randn([3 * S, S + F], { ...o, seed: seed + 1 });
  const weights = scale(unscaled, 0.05);
  const bias = Tensor.randn([3 * S], { ...o, seed: seed + 2 });
  const h0 = Tensor.randn([B, S], { ...o, seed: seed + 3 });
  const c0 = Tensor.randn([B, S], { ...o, seed: seed + 4 });
  const gradOutputs = Tensor.randn([T, B, S], { ...o, seed: seed + 5 });
  return {
    x, weights, bias, h0, c0, gradOutputs,
    [Symbol.dispose]() {
      for (const t of [x, weights, bias, h0, c0, gradOutputs]) t.dispose();
    },
  };
}

/** The weight and bias gradients of one backward, read back (which waits for them). */
function gradients(p: Problem): { dWeights: Float32Array; dBias: Float32Array } {
  using f = lltmSequenceForward(p.x, p.weights, p.bias, p.h0, p.c0, { training: true });
  using g = lltmSequenceBackward(p.gradOutputs, undefined, undefined, f.reserve!, p.x, p.weights, p.h0);
  return { dWeights: g.dWeights.toTypedArray() as Float32Array, dBias: g.dBias.toTypedArray() as Float32Array };
}

function assertSame(actual: Float32Array, expected: Float32Array, what: string): void {
  assert(actual.length === expected.length, `${what}: ${actual.length} elements, expected ${expected.length}`);
  let worst = 0, scale = 0;
  for (let i = 0; i < actual.length; i++) {
    worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
    scale = Math.max(scale, Math.abs(expected[i]!));
  }
  // The same products on the same data: equal but for cuBLAS's choice of kernel, which the stream does not change.
  assert(worst <= 1e-6 * scale, `${what}: differs by ${worst} (largest ${scale})`);
}

/** Fills each gradient with round + 2 and reads it back: a fill ordered before the side work's products would be overwritten by them. */
function fillAndCheck(round: number, gradients: Record<string, Tensor>): void {
  const value = round + 2;
  for (const t of Object.values(gradients)) t.fill(value);
  for (const [name, t] of Object.entries(gradients)) {
    const v = t.toTypedArray();
    assert(v.every((x) => x === value), `round ${round}: ${name} holds ${v.find((x) => x !== value)} after the fill`);
  }
}

test("CUDA side work: an op overwriting the weight gradients runs after them", () => {
  using p = problem(1);
  using f = lltmSequenceForward(p.x, p.weights, p.bias, p.h0, p.c0, { training: true });
  using dWeights = Tensor.zeros([3 * S, S + F], { device: "cuda" });
  using dBias = Tensor.zeros([3 * S], { device: "cuda" });
  for (let round = 0; round < 3; round++) {
    const g = lltmSequenceBackwardAccumulate(p.gradOutputs, undefined, undefined, f.reserve!, p.x, p.weights, p.h0, dWeights, dBias);
    for (const t of [g.dInputs, g.dH0, g.dC0]) t.dispose();
    fillAndCheck(round, { d_weights: dWeights, d_bias: dBias });
  }
}, { skip });

test("CUDA side work: the blocks of the inputs it reads are not reused before it is done", () => {
  const expected = (() => {
    using p = problem(2);
    return gradients(p);
  })();
  for (let round = 0; round < 3; round++) {
    const p = problem(2);
    const f = lltmSequenceForward(p.x, p.weights, p.bias, p.h0, p.c0, { training: true });
    const g = lltmSequenceBackward(p.gradOutputs, undefined, undefined, f.reserve!, p.x, p.weights, p.h0);
    // The inputs and the reserve go back to the pool while the products may still read them; new tensors of
    // their sizes, filled at once, would take the same blocks if the pool handed them out.
    f.dispose();
    p[Symbol.dispose]();
    const fillers = [Tensor.full([T, B, F], 1e3, { device: "cuda" }), Tensor.full([5 * T * B * S], -1e3, { device: "cuda" })];
    assertSame(g.dWeights.toTypedArray() as Float32Array, expected.dWeights, `round ${round}: d_weights`);
    assertSame(g.dBias.toTypedArray() as Float32Array, expected.dBias, `round ${round}: d_bias`);
    g.dispose();
    for (const t of fillers) t.dispose();
  }
}, { skip });

test("CUDA side work: the scratch it reads (the gate gradients) is not handed out before it is done", () => {
  const expected = (() => {
    using p = problem(4);
    return gradients(p);
  })();
  using p = problem(4);
  for (let round = 0; round < 3; round++) {
    const f = lltmSequenceForward(p.x, p.weights, p.bias, p.h0, p.c0, { training: true });
    const g = lltmSequenceBackward(p.gradOutputs, undefined, undefined, f.reserve!, p.x, p.weights, p.h0);
    // The backward's dG scratch ([T * B, 3S]) went back to the pool as the call returned; tensors of its size,
    // filled at once, would take that block if the pool handed it out while the products still read it.
    const fillers = [0, 1].map(() => Tensor.full([T * B, 3 * S], 1e3, { device: "cuda" }));
    assertSame(g.dWeights.toTypedArray() as Float32Array, expected.dWeights, `round ${round}: d_weights`);
    assertSame(g.dBias.toTypedArray() as Float32Array, expected.dBias, `round ${round}: d_bias`);
    g.dispose();
    f.dispose();
    for (const t of fillers) t.dispose();
  }
}, { skip });

test("CUDA side work: a captured backward records the products and joins them", () => {
  using p = problem(3);
  const expected = gradients(p);
  using dWeights = Tensor.zeros([3 * S, S + F], { device: "cuda" });
  using dBias = Tensor.zeros([3 * S], { device: "cuda" });
  using step = compileStep(() => {
    dWeights.fill(0);
    dBias.fill(0);
    using f = lltmSequenceForward(p.x, p.weights, p.bias, p.h0, p.c0, { training: true });
    const g = lltmSequenceBackwardAccumulate(p.gradOutputs, undefined, undefined, f.reserve!, p.x, p.weights, p.h0, dWeights, dBias);
    for (const t of [g.dInputs, g.dH0, g.dC0]) t.dispose();
  }, { device: "cuda" });
  for (let replay = 0; replay < 4; replay++) {
    step();
    assertSame(dWeights.toTypedArray() as Float32Array, expected.dWeights, `replay ${replay}: d_weights`);
    assertSame(dBias.toTypedArray() as Float32Array, expected.dBias, `replay ${replay}: d_bias`);
  }
}, { skip });

// linear's gradients at a size whose d_weight product takes tens of microseconds.
const N = 16384, M = 512, K = 512;

function linearProblem(seed: number): { gradY: Tensor; x: Tensor; weight: Tensor; [Symbol.dispose](): void } {
  const o = { device: "cuda" as const, seed };
  const gradY = Tensor.randn([N, M], o), x = Tensor.randn([N, K], { ...o, seed: seed + 1 });
  const weight = Tensor.randn([M, K], { ...o, seed: seed + 2 });
  return { gradY, x, weight, [Symbol.dispose]: () => [gradY, x, weight].forEach((t) => t.dispose()) };
}

function linearGradients(seed: number): { dWeight: Float32Array; dBias: Float32Array } {
  using p = linearProblem(seed);
  using g = linearBackward(p.gradY, p.x, p.weight);
  return { dWeight: g.dWeight!.toTypedArray() as Float32Array, dBias: g.dBias!.toTypedArray() as Float32Array };
}

test("CUDA side work: linear's weight gradients are done before an op overwrites what they read", () => {
  const expected = linearGradients(5);
  using p = linearProblem(5);
  using x = p.x.clone(), gradY = p.gradY.clone();
  for (let round = 0; round < 3; round++) {
    using g = linearBackward(p.gradY, p.x, p.weight);
    // Overwritten at once: without the settle the product would read the fills.
    p.x.fill(1e3);
    p.gradY.fill(-1e3);
    assertSame(g.dWeight!.toTypedArray() as Float32Array, expected.dWeight, `round ${round}: d_weight`);
    assertSame(g.dBias!.toTypedArray() as Float32Array, expected.dBias, `round ${round}: d_bias`);
    p.x.copyFrom(x);
    p.gradY.copyFrom(gradY);
  }
}, { skip });

test("CUDA side work: the blocks linear's weight gradients read are not reused before they are done", () => {
  const expected = linearGradients(6);
  for (let round = 0; round < 3; round++) {
    const p = linearProblem(6);
    const g = linearBackward(p.gradY, p.x, p.weight);
    p[Symbol.dispose]();
    const fillers = [0, 1].map(() => Tensor.full([N, K], 1e3, { device: "cuda" }));
    assertSame(g.dWeight!.toTypedArray() as Float32Array, expected.dWeight, `round ${round}: d_weight`);
    assertSame(g.dBias!.toTypedArray() as Float32Array, expected.dBias, `round ${round}: d_bias`);
    g.dispose();
    for (const t of fillers) t.dispose();
  }
}, { skip });

test("CUDA side work: linear's gradients added into given tensors, then overwritten, in order", () => {
  using p = linearProblem(7);
  using dWeight = Tensor.zeros([M, K], { device: "cuda" });
  using dBias = Tensor.zeros([M], { device: "cuda" });
  for (let round = 0; round < 3; round++) {
    linearBackward(p.gradY, p.x, p.weight, { dWeight, dBias }).dispose();
    fillAndCheck(round, { d_weight: dWeight, d_bias: dBias });
  }
}, { skip });
