/**
 * Per-sample lengths in the sequence engine (the lengths slot of
 * SEQUENCE_FORWARD and SEQUENCE_BACKWARD) and in nn.LLTM: against the
 * float64 reference with lengths, against float64 central differences,
 * against each sample run alone over its own steps, and the refusals of bad
 * lengths; on the CPU and (when present) on CUDA.
 */
import fc from "fast-check";

import {
  type DeviceLike, type DType, LLTM, lltmSequenceBackward, lltmSequenceBackwardAccumulate, lltmSequenceForward,
  add, noGrad, sum, Tensor,
} from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";
import { dtype, layout, makeInput, withPrecision } from "./helpers.ts";
import {
  assertProperty, magnitudeTolerance, makeSequence, makeWeights, mismatch, sequenceCase, sequenceLayout,
  sequenceTolerance,
} from "./sequence_helpers.ts";
import { type Gradient, referenceSequence } from "./sequence_reference.ts";

const devices = [["cpu", false], ["cuda", cudaSkipReason()]] as const;

const int32 = (values: readonly number[], device: DeviceLike) =>
  Tensor.fromTypedArray(Int32Array.from(values), [values.length], { dtype: "int32", device });

/** Whether every row [b] of a [T, B, X] tensor's steps from lengths[b] on is exactly 0. */
function zeroPast(t: Tensor, lengths: readonly number[]): boolean {
  const [T, B, X] = t.shape as [number, number, number];
  const v = t.toTypedArray();
  for (let s = 0; s < T; s++) {
    for (let b = 0; b < B; b++) {
      if (s < lengths[b]!) continue;
      for (let k = 0; k < X; k++) if (v[(s * B + b) * X + k] !== 0) return false;
    }
  }
  return true;
}

/** A case with lengths from 1 to T for each sample. */
const lengthsCase = sequenceCase.chain((c) =>
  fc.record({ c: fc.constant(c), lengths: fc.array(fc.integer({ min: 1, max: c.steps }), { minLength: c.batch, maxLength: c.batch }) })
);

function engineProperty(device: DeviceLike) {
  const layouts = fc.record({ inputs: sequenceLayout, gradOutputs: sequenceLayout, weights: layout, small: layout });
  const given = fc.record({ outputs: fc.boolean(), lastH: fc.boolean(), lastCell: fc.boolean() });
  return fc.property(lengthsCase, dtype, layouts, given, fc.integer({ min: 0, max: 1 << 20 }), ({ c, lengths }, dt, lay, g, seed) => {
    const { steps: T, batch: B, features: F, state: S } = c;
    using inputs = makeSequence([T, B, F], lay.inputs, seed, dt, device);
    using weights = makeWeights(S, F, lay.weights, seed + 1, dt, device);
    using bias = makeInput([3 * S], lay.small, seed + 2, dt, device);
    using h0 = makeInput([B, S], lay.small, seed + 3, dt, device);
    using c0 = makeInput([B, S], lay.small, seed + 4, dt, device);
    using gradOutputs = g.outputs ? makeSequence([T, B, S], lay.gradOutputs, seed + 5, dt, device) : undefined;
    using gradLastH = g.lastH ? makeInput([B, S], lay.small, seed + 6, dt, device) : undefined;
    using gradLastCell = g.lastCell ? makeInput([B, S], lay.small, seed + 7, dt, device) : undefined;
    using len = int32(lengths, device);
    const at = `${dt} T=${T} ${B}x${F}x${S} lengths=${lengths} ${JSON.stringify(lay)} ${JSON.stringify(g)}`;

    using fw = lltmSequenceForward(inputs, weights, bias, h0, c0, { lengths: len });
    using bw = lltmSequenceBackward(gradOutputs, gradLastH, gradLastCell, fw.reserve!, inputs, weights, h0, { lengths: len });
    const ref = referenceSequence(inputs, weights, bias, h0, c0, gradOutputs, gradLastH, gradLastCell, lengths);
    const tol = sequenceTolerance(dt, T), magnitudeTol = magnitudeTolerance(dt, T);
    const engine = {
      outputs: fw.outputs, lastH: fw.lastH, lastCell: fw.lastCell, dInputs: bw.dInputs, dWeights: bw.dWeights,
      dBias: bw.dBias, dH0: bw.dH0, dC0: bw.dC0,
    };
    for (const [name, t] of Object.entries(engine)) {
      const values = ref.magnitudes[name as Gradient];
      const why = mismatch(t.toTypedArray(), ref[name as keyof typeof engine], tol, values && { values, tol: magnitudeTol });
      assert(why === undefined, `${at} ${name} vs reference: ${why}`);
    }
    assert(zeroPast(fw.outputs, lengths), `${at}: outputs past a sample's length are 0`);
    assert(zeroPast(bw.dInputs, lengths), `${at}: no gradient reaches inputs past a sample's length`);
    using inference = lltmSequenceForward(inputs, weights, bias, h0, c0, { training: false, lengths: len });
    for (const name of ["outputs", "lastH", "lastCell"] as const) {
      const why = mismatch(inference[name].toTypedArray(), fw[name].toTypedArray(), tol);
      assert(why === undefined, `${at} inference ${name} vs training: ${why}`);
    }
  });
}

/** The loss sum(outputs * gOut) + sum(lastH * gH) + sum(lastCell * gC) of an inference forward. */
function loss(
  x: Tensor, w: Tensor, b: Tensor, h0: Tensor, c0: Tensor, len: Tensor, gOut: Float64Array, gH: Float64Array, gC: Float64Array,
): number {
  using f = lltmSequenceForward(x, w, b, h0, c0, { training: false, lengths: len });
  let total = 0;
  const out = f.outputs.toTypedArray(), h = f.lastH.toTypedArray(), c = f.lastCell.toTypedArray();
  for (let i = 0; i < out.length; i++) total += out[i]! * gOut[i]!;
  for (let i = 0; i < h.length; i++) total += h[i]! * gH[i]! + c[i]! * gC[i]!;
  return total;
}

function gradcheckProperty(device: DeviceLike) {
  const sizes = fc.record({
    steps: fc.integer({ min: 1, max: 5 }), batch: fc.integer({ min: 1, max: 3 }), features: fc.integer({ min: 1, max: 3 }),
    state: fc.integer({ min: 1, max: 3 }), seed: fc.integer({ min: 0, max: 1000 }),
  }).chain((s) => fc.record({ s: fc.constant(s), lengths: fc.array(fc.integer({ min: 1, max: s.steps }), { minLength: s.batch, maxLength: s.batch }) }));
  return fc.property(sizes, ({ s, lengths }) => {
    const { steps: T, batch: B, features: F, state: S, seed } = s;
    const o = (k: number) => ({ dtype: "float64" as const, device, seed: seed * 16 + k });
    const args = [
      Tensor.randn([T, B, F], o(1)), makeWeights(S, F, "contiguous", seed * 16 + 2, "float64", device), Tensor.randn([3 * S], o(3)),
      Tensor.randn([B, S], o(4)), Tensor.randn([B, S], o(5)),
    ] as const;
    using gOutT = Tensor.randn([T, B, S], o(6));
    using gHT = Tensor.randn([B, S], o(7));
    using gCT = Tensor.randn([B, S], o(8));
    using len = int32(lengths, device);
    const [gOut, gH, gC] = [gOutT, gHT, gCT].map((t) => t.toTypedArray() as Float64Array) as [Float64Array, Float64Array, Float64Array];
    try {
      const [x, w, b, h0, c0] = args;
      using fw = lltmSequenceForward(x, w, b, h0, c0, { lengths: len });
      using bw = lltmSequenceBackward(gOutT, gHT, gCT, fw.reserve!, x, w, h0, { lengths: len });
      const analytic = [bw.dInputs, bw.dWeights, bw.dBias, bw.dH0, bw.dC0].map((t) => t.toTypedArray());
      const eps = 1e-6;
      args.forEach((arg, k) => {
        const host = arg.toTypedArray() as Float64Array;
        for (let i = 0; i < host.length; i++) {
          const probe = (delta: number) => {
            const v = Float64Array.from(host);
            v[i]! += delta;
            using moved = Tensor.fromTypedArray(v, arg.shape, { device });
            const all = args.map((a, j) => (j === k ? moved : a)) as unknown as [Tensor, Tensor, Tensor, Tensor, Tensor];
            return loss(...all, len, gOut, gH, gC);
          };
          const numeric = (probe(eps) - probe(-eps)) / (2 * eps);
          const a = analytic[k]![i]!;
          assert(Math.abs(a - numeric) <= 1e-6 * Math.max(1, Math.abs(numeric)),
            `${JSON.stringify(s)} lengths=${lengths} argument ${k} [${i}]: analytic ${a}, central difference ${numeric}`);
        }
      });
    } finally {
      for (const t of args) t.dispose();
    }
  });
}

for (const [device, skip] of devices) {
  test(`sequence engine with lengths matches the float64 reference on ${device} (sizes, lengths, layouts, dtypes)`, () => {
    assertProperty(engineProperty(device), { numRuns: 30 });
  }, { skip });

  test(`sequence gradients with lengths match float64 central differences on ${device}`, () => {
    assertProperty(gradcheckProperty(device), { numRuns: 6 });
  }, { skip });

  test(`lengths all T equal no lengths, and a sample equals itself run alone over its own steps, on ${device}`, () => {
    const [T, B, F, S] = [7, 4, 3, 5];
    const lengths = [7, 1, 4, 6];
    for (const dt of ["float32", "float64"] as DType[]) {
      const o = (k: number) => ({ dtype: dt, device, seed: k });
      using x = Tensor.randn([T, B, F], o(1));
      using w = makeWeights(S, F, "contiguous", 2, dt, device);
      using b = Tensor.randn([3 * S], o(3));
      using h0 = Tensor.randn([B, S], o(4));
      using c0 = Tensor.randn([B, S], o(5));
      using full = int32([T, T, T, T], device);
      using plain = lltmSequenceForward(x, w, b, h0, c0);
      using same = lltmSequenceForward(x, w, b, h0, c0, { lengths: full });
      for (const name of ["outputs", "lastH", "lastCell"] as const) {
        assertEquals(Array.from(same[name].toTypedArray()), Array.from(plain[name].toTypedArray()), `${dt} ${name}`);
      }
      using len = int32(lengths, device);
      using packed = lltmSequenceForward(x, w, b, h0, c0, { lengths: len });
      const tol = sequenceTolerance(dt, T);
      for (let s = 0; s < B; s++) {
        const n = lengths[s]!;
        using xs0 = x.narrow(0, 0, n);
        using xs = xs0.narrow(1, s, 1);
        using hs = h0.narrow(0, s, 1);
        using cs = c0.narrow(0, s, 1);
        using alone = lltmSequenceForward(xs, w, b, hs, cs);
        using out0 = packed.outputs.narrow(0, 0, n);
        using out = out0.narrow(1, s, 1);
        using lastH = packed.lastH.narrow(0, s, 1);
        using lastCell = packed.lastCell.narrow(0, s, 1);
        for (const [name, got, want] of [["outputs", out, alone.outputs], ["lastH", lastH, alone.lastH], ["lastCell", lastCell, alone.lastCell]] as const) {
          const why = mismatch(got.toTypedArray(), want.toTypedArray(), tol);
          assert(why === undefined, `${dt} sample ${s} (length ${n}) ${name}: ${why}`);
        }
      }
      assert(zeroPast(packed.outputs, lengths), `${dt}: outputs past the lengths are 0`);
    }
  }, { skip });

  test(`half types with lengths compute as float32 on the same values, rounded once, on ${device}`, () => {
    // The library stages half tensors through float32 (the compute type) and leaves lengths as they are,
    // so a half call is the float32 call on the widened values with each result rounded to the half type,
    // its products at the half type's precision ("medium" for bfloat16, "high" for float16: lltm.h).
    // (The CPU's bfloat16 has an engine of its own where the CPU has AVX512_BF16: sequence_bf16.test.ts.)
    const [T, B, F, S] = [5, 3, 4, 6];
    const lengths = [5, 2, 3];
    for (const half of (device === "cpu" ? ["float16"] : ["bfloat16", "float16"]) as DType[]) {
      const narrow = (t: Tensor) => {
        const h = t.to(half);
        t.dispose();
        return h;
      };
      const wide = (t: Tensor) => t.to("float32");
      using x = narrow(Tensor.randn([T, B, F], { device, seed: 1 }));
      using w = narrow(makeWeights(S, F, "contiguous", 2, "float32", device));
      using b = narrow(Tensor.randn([3 * S], { device, seed: 3 }));
      using h0 = narrow(Tensor.randn([B, S], { device, seed: 4 }));
      using c0 = narrow(Tensor.randn([B, S], { device, seed: 5 }));
      using go = narrow(Tensor.randn([T, B, S], { device, seed: 6 }));
      using len = int32(lengths, device);
      using fw = lltmSequenceForward(x, w, b, h0, c0, { lengths: len });
      using bw = lltmSequenceBackward(go, undefined, undefined, fw.reserve!, x, w, h0, { lengths: len });
      using x32 = wide(x), w32 = wide(w), b32 = wide(b), h32 = wide(h0), c32 = wide(c0), go32 = wide(go);
      const precision = half === "bfloat16" ? "medium" : "high";
      using fw32 = withPrecision(precision, () => lltmSequenceForward(x32, w32, b32, h32, c32, { lengths: len }));
      using bw32 = withPrecision(precision, () => lltmSequenceBackward(go32, undefined, undefined, fw32.reserve!, x32, w32, h32, { lengths: len }));
      const pairs = [
        ["outputs", fw.outputs, fw32.outputs], ["lastH", fw.lastH, fw32.lastH], ["lastCell", fw.lastCell, fw32.lastCell],
        ["dInputs", bw.dInputs, bw32.dInputs], ["dWeights", bw.dWeights, bw32.dWeights], ["dH0", bw.dH0, bw32.dH0],
      ] as const;
      for (const [name, got, f32] of pairs) {
        using rounded = f32.to(half);
        assertEquals(Array.from(got.toTypedArray()), Array.from(rounded.toTypedArray()), `${half} ${name}`);
      }
      assert(zeroPast(fw.outputs, lengths), `${half}: outputs past the lengths are 0`);
    }
  }, { skip });

  test(`bad lengths are refused before anything is written, on ${device}`, () => {
    const [T, B, F, S] = [4, 3, 2, 3];
    using x = Tensor.randn([T, B, F], { dtype: "float64", device, seed: 1 });
    using w = makeWeights(S, F, "contiguous", 2, "float64", device);
    using b = Tensor.randn([3 * S], { dtype: "float64", device, seed: 3 });
    using h0 = Tensor.zeros([B, S], { dtype: "float64", device });
    using c0 = Tensor.zeros([B, S], { dtype: "float64", device });
    for (const [values, at, value] of [[[1, 0, 2], 1, 0], [[4, 2, 5], 2, 5], [[-3, 1, 1], 0, -3]] as const) {
      using len = int32(values, device);
      assertThrowsLLTM(() => lltmSequenceForward(x, w, b, h0, c0, { lengths: len }), "INVALID_ARGUMENT",
        new RegExp(`'lengths' holds ${value} at \\[${at}\\]; expected a length from 1 to T = ${T}`));
    }
    using wrongSize = int32([1, 2], device);
    assertThrowsLLTM(() => lltmSequenceForward(x, w, b, h0, c0, { lengths: wrongSize }), "SHAPE_MISMATCH", /'lengths'/);
    using floats = Tensor.full([B], 2, { dtype: "float64", device });
    assertThrowsLLTM(() => lltmSequenceForward(x, w, b, h0, c0, { lengths: floats }), "INVALID_DTYPE", /'lengths' has dtype float64; expected int32/);
    // The backward: the parameter gradients it would add to stay as they were.
    using good = int32([4, 2, 1], device);
    using fw = lltmSequenceForward(x, w, b, h0, c0, { lengths: good });
    using dW = Tensor.full([3 * S, S + F], 7, { dtype: "float64", device });
    using dB = Tensor.full([3 * S], 7, { dtype: "float64", device });
    using bad = int32([4, 5, 1], device);
    using go = Tensor.randn([T, B, S], { dtype: "float64", device, seed: 9 });
    assertThrowsLLTM(() => lltmSequenceBackwardAccumulate(go, undefined, undefined, fw.reserve!, x, w, h0, dW, dB, { lengths: bad }),
      "INVALID_ARGUMENT", /lltmSequenceBackwardAccumulate: 'lengths' holds 5 at \[1\]/);
    assert(Array.from(dW.toTypedArray()).every((v) => v === 7) && Array.from(dB.toTypedArray()).every((v) => v === 7),
      "a refused backward leaves the gradients it adds to untouched");
  }, { skip });

  test(`LLTM.forward with lengths equals each sample run alone (layers 2, both directions, batchFirst), values and gradients, on ${device}`, () => {
    const [T, B, F, S] = [6, 3, 2, 4];
    const lengths = [6, 2, 4];
    for (const batchFirst of [false, true]) {
      using m = new LLTM(F, S, { layers: 2, bidirectional: true, batchFirst, dtype: "float64", device, seed: 3 });
      using x0 = Tensor.randn([T, B, F], { dtype: "float64", device, seed: 4 });
      using x = batchFirst ? x0.transpose(0, 1).contiguous() : x0.retain();
      x.requiresGrad = true;
      using out = m.forward(x, undefined, { lengths });
      const output = out.output.toTypedArray(), h = out.h.toTypedArray();
      // One loss over everything; its gradients are the sums of each sample's own.
      using y = sum(out.output);
      using hs = sum(out.h);
      using total0 = add(y, hs);
      total0.backward();
      const grads = m.parameters().map((p) => Float64Array.from(p.grad!.toTypedArray()));
      const xGrad = x.grad!.toTypedArray();
      m.zeroGrad();
      const expected = grads.map((g) => new Float64Array(g.length));
      const dirs = 2 * 2;
      const at = (t: number, b: number) => (batchFirst ? b * T + t : t * B + b);
      for (let s = 0; s < B; s++) {
        const n = lengths[s]!;
        using xs0 = x0.narrow(0, 0, n);
        using xs1 = xs0.narrow(1, s, 1);
        using xs = batchFirst ? xs1.transpose(0, 1).contiguous() : xs1.contiguous();
        xs.requiresGrad = true;
        using alone = m.forward(xs);
        const ao = alone.output.toTypedArray(), ah = alone.h.toTypedArray();
        using ya = sum(alone.output);
        using ha = sum(alone.h);
        using ta = add(ya, ha);
        ta.backward();
        m.parameters().forEach((p, k) => p.grad!.toTypedArray().forEach((v, i) => (expected[k]![i]! += v)));
        m.zeroGrad();
        const ag = xs.grad!.toTypedArray();
        for (let t = 0; t < T; t++) {
          for (let k = 0; k < 2 * S; k++) {
            const got = output[at(t, s) * 2 * S + k]!, want = t < n ? ao[t * 2 * S + k]! : 0;
            assert(Math.abs(got - want) <= 1e-12 * Math.max(1, Math.abs(want)), `batchFirst ${batchFirst} sample ${s} t ${t} output ${k}: ${got} vs ${want}`);
          }
          for (let k = 0; k < F; k++) {
            const got = xGrad[at(t, s) * F + k]!, want = t < n ? ag[t * F + k]! : 0;
            assert(Math.abs(got - want) <= 1e-12 * Math.max(1, Math.abs(want)), `batchFirst ${batchFirst} sample ${s} t ${t} x.grad ${k}: ${got} vs ${want}`);
          }
        }
        for (let d = 0; d < dirs; d++) {
          for (let k = 0; k < S; k++) {
            const got = h[(d * B + s) * S + k]!, want = ah[d * S + k]!;
            assert(Math.abs(got - want) <= 1e-12 * Math.max(1, Math.abs(want)), `sample ${s} h[${d}] ${k}: ${got} vs ${want}`);
          }
        }
      }
      grads.forEach((g, k) => g.forEach((v, i) => {
        const want = expected[k]![i]!;
        assert(Math.abs(v - want) <= 1e-11 * Math.max(1, Math.abs(want)), `batchFirst ${batchFirst} parameter ${k} [${i}]: ${v} vs ${want}`);
      }));
    }
  }, { skip });

  test(`LLTM's reverse direction with lengths runs each sample from its own last step back to its first, on ${device}`, () => {
    const [T, B, F, S] = [5, 3, 2, 3];
    const lengths = [3, 5, 1];
    using m = new LLTM(F, S, { bidirectional: true, dtype: "float64", device, seed: 5 });
    using x = Tensor.randn([T, B, F], { dtype: "float64", device, seed: 6 });
    const params = new Map(m.namedParameters());
    const w = params.get("reverseLayers.0.weights")!, b = params.get("reverseLayers.0.bias")!;
    using out = noGrad(() => m.forward(x, undefined, { lengths }));
    const output = out.output.toTypedArray(), hs = out.h.toTypedArray(), xs = x.toTypedArray();
    for (let s = 0; s < B; s++) {
      const n = lengths[s]!;
      // The sample's steps in reverse order, built on the host.
      const reversed = new Float64Array(n * F);
      for (let t = 0; t < n; t++) for (let k = 0; k < F; k++) reversed[t * F + k] = xs[((n - 1 - t) * B + s) * F + k]!;
      using xr = Tensor.fromTypedArray(reversed, [n, 1, F], { device });
      using zeros = Tensor.zeros([1, S], { dtype: "float64", device });
      using back = lltmSequenceForward(xr, w, b, zeros, zeros, { training: false });
      const bo = back.outputs.toTypedArray(), bh = back.lastH.toTypedArray();
      for (let t = 0; t < T; t++) {
        for (let k = 0; k < S; k++) {
          const got = output[(t * B + s) * 2 * S + S + k]!, want = t < n ? bo[(n - 1 - t) * S + k]! : 0;
          assert(Math.abs(got - want) <= 1e-12 * Math.max(1, Math.abs(want)), `sample ${s} t ${t} reverse output ${k}: ${got} vs ${want}`);
        }
      }
      for (let k = 0; k < S; k++) {
        const got = hs[(1 * B + s) * S + k]!, want = bh[k]!;
        assert(Math.abs(got - want) <= 1e-12 * Math.max(1, Math.abs(want)), `sample ${s} reverse h ${k}: ${got} vs ${want}`);
      }
    }
  }, { skip });

  test(`LLTM.forward refuses bad lengths naming itself, on ${device}`, () => {
    using m = new LLTM(2, 3, { device });
    using x = Tensor.randn([4, 2, 2], { device, seed: 1 });
    noGrad(() => {
      assertThrowsLLTM(() => m.forward(x, undefined, { lengths: [1, 5] }), "INVALID_ARGUMENT", /LLTM\.forward: lengths\[1\] is 5; expected an integer from 1 to T = 4/);
      assertThrowsLLTM(() => m.forward(x, undefined, { lengths: [1.5, 2] }), "INVALID_ARGUMENT", /LLTM\.forward: lengths\[0\] is 1\.5/);
      assertThrowsLLTM(() => m.forward(x, undefined, { lengths: [1, 2, 3] }), "SHAPE_MISMATCH", /LLTM\.forward: lengths has 3 entries but the input's batch is 2/);
      using floats = Tensor.full([2], 1, { device });
      assertThrowsLLTM(() => m.forward(x, undefined, { lengths: floats }), "INVALID_ARGUMENT", /LLTM\.forward: lengths must be an int32 tensor \[B\], got float32 \[2\]/);
    });
  }, { skip });
}
