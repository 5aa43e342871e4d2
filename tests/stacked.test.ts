/**
 * The stacked ops (lltmStackedForward / lltmStackedBackward, csrc/lltm_ops.def's STACKED_*): L layers in one
 * native call each way against the same layers run one sequence call each (outputs, last states, every
 * gradient, the parameters' laid out as params), over sizes, layer counts, alignments, lengths and dtypes, on
 * the CPU and on CUDA where present; params' size and the reserve refused by name. The LLTM module takes them
 * once a fused optimizer holds its parameters, with the results and gradients of its layer-by-layer calls.
 */
import fc from "fast-check";
import {
  AdamW, add, type DType, getFloat32MatmulPrecision, LLTM, lltmSequenceBackward, lltmSequenceForward, lltmStackedBackward,
  lltmStackedForward, setFloat32MatmulPrecision, sum, Tensor,
} from "../ts/index.ts";
import * as native from "../ts/native/index.ts";
import { assert, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";
import { runChild, testFile } from "./child.ts";
import { centralDifferences } from "./op_helpers.ts";
import { assertProperty } from "./sequence_helpers.ts";
import { assertClose, check, type Device, flatParams, layout, stack } from "./stacked_check.ts";

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

test("on CUDA both directions of a stack on lanes of their own match the layers and directions run one sequence call each", () => {
  const r = runChild(testFile("wavefront_child.ts"), ["cuda", "directions"], { env: { LLTM_CUDA_KERNELS: "directions-at-once" }, timeoutMs: 300_000 });
  assert(r.status === 0, `wavefront_child.ts cuda directions failed:\n${r.stdout}${r.stderr}`);
}, { skip: cudaSkipReason() });

test("on CUDA lltmStackedBackward refuses to run at another float32 matmul precision than its forward's, by name", () => {
  const s = stack(3, 2, 4, 5, 2, 1, 1, 3);
  using params = flatParams(s, "float32", "cuda");
  using x = Tensor.ones([3, 2, 4], { device: "cuda" });
  using h0 = Tensor.zeros([2, 2, 5], { device: "cuda" });
  const before = getFloat32MatmulPrecision();
  try {
    setFloat32MatmulPrecision("high");
    using f = lltmStackedForward(x, params, h0, h0);
    setFloat32MatmulPrecision("highest");
    assertThrowsLLTM(() => lltmStackedBackward(f.outputs, undefined, undefined, f.reserve!, x, params, h0), "INVALID_ARGUMENT",
      /lltmStackedBackward: the float32 matmul precision is "highest" but the forward that made 'reserve' ran at "high"/);
    setFloat32MatmulPrecision("high");
    using g = lltmStackedBackward(f.outputs, undefined, undefined, f.reserve!, x, params, h0);
    assert(g.dParams !== undefined, "the backward at the forward's precision runs");
  } finally {
    setFloat32MatmulPrecision(before);
  }
}, { skip: cudaSkipReason() });

// The wavefront: forced in 2, 3 and 8 chunks (more than some stacks have steps) on both devices; on CUDA also
// unforced at a size where the backend chooses it.
for (const device of ["cpu", "cuda"] as const) {
  const skip = device === "cuda" ? cudaSkipReason() : false;
  const settings: (string | undefined)[] = device === "cuda" ? ["2", "3", "8", undefined] : ["2", "3", "8"];
  test(`${device}: the stacked ops as a wavefront (each layer in chunks beside the next) match the layers run one sequence call each`, () => {
    for (const chunks of settings) {
      const env: Record<string, string> = chunks === undefined ? {} : { LLTM_STACKED_CHUNKS: chunks };
      const r = runChild(testFile("wavefront_child.ts"), [device], { env, timeoutMs: 300_000 });
      assert(r.status === 0, `wavefront_child.ts ${device} in ${chunks ?? "the backend's"} chunks failed:\n${r.stdout}${r.stderr}`);
    }
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
    for (const k of Object.keys(values) as (keyof typeof values)[]) {
      const a = analytic[k].toTypedArray(), numeric = centralDifferences(loss, values[k]);
      for (let i = 0; i < numeric.length; i++) {
        if (k === "params" && padding.has(i)) continue; // between parts: no parameter, a gradient nobody reads
        // As the char LM's check: central differences within 1e-6 of the gradient's scale (eps² in the curvature,
        // the loss's rounding / eps, and the kernels' own float64 rounding over a few hundred terms).
        assert(Math.abs(a[i]! - numeric[i]!) <= 1e-6 * Math.max(1, Math.abs(numeric[i]!)), `${k}[${i}]: ${a[i]} against ${numeric[i]}`);
      }
    }
  });
}

// Sizes whose layers' reserves fit in 63 bits each but not all of them in 64: broadcast inputs and states of 2^29
// steps and rows, two layers in two directions (four sequence reserves of T*B*5*S float32 elements, 2^62.3 bytes
// each).
test("a stacked reserve past 64 bits is refused by name before anything is allocated", () => {
  const [T, B] = [2 ** 29, 2 ** 29];
  using one = Tensor.zeros([1, 1, 1]);
  using inputs = one.expand([T, B, 1]);
  using params = Tensor.zeros([42]);
  using state = Tensor.zeros([4, 1, 1]);
  using h0 = state.expand([4, B, 1]);
  assertThrowsLLTM(
    () => lltmStackedForward(inputs, params, h0, h0, { bidirectional: true }), "INVALID_ARGUMENT",
    /^lltmStackedForward: the reserve of L = 2 layers in D = 2 directions does not fit in 64 bits/,
  );
});
