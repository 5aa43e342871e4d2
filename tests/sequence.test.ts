/**
 * The sequence engine (lltm_sequence_forward / _backward) against the
 * float64 reference and against the per-step path, over random T, B, F, S,
 * layouts and dtypes, on the CPU and (when present) on CUDA; inference
 * against training; accumulation; gradients through time against central
 * differences; strided outputs through the C ABI.
 */
import fc from "fast-check";

import { type Describable, DescriptorBlock } from "../ts/native/descriptor.ts";
import {
  add, type DeviceLike, type DType, LLTMLayer, lltmSequence, lltmSequenceBackward, lltmSequenceBackwardAccumulate,
  lltmSequenceForward, mul, relativeError, sequenceGradcheck, sum, Tensor,
} from "../ts/index.ts";
import { native } from "../ts/native/library.ts";
import { assert, assertEquals, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";
import { disposeAll, dtype, layout, makeInput } from "./helpers.ts";
import {
  assertProperty, type Magnitude, magnitudeTolerance, makeSequence, makeWeights, mismatch, sequenceCase, sequenceLayout,
  sequenceTolerance,
} from "./sequence_helpers.ts";
import { type Gradient, referenceSequence } from "./sequence_reference.ts";

const devices = [["cpu", false], ["cuda", cudaSkipReason()]] as const;
/** Random cases per device; LLTM_SEQUENCE_CASES raises it for a longer search. */
const cases = Number((globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.LLTM_SEQUENCE_CASES ?? 60);

function check(what: string, actual: Tensor, expected: ArrayLike<number>, tol: number): void {
  const why = mismatch(actual.toTypedArray(), expected, tol);
  assert(why === undefined, `${what}: ${why}`);
}

const layouts = fc.record({
  inputs: sequenceLayout, gradOutputs: sequenceLayout, weights: layout, bias: layout, h0: layout, c0: layout,
  gradLast: layout,
});
/** Which of the three optional output gradients are given. */
const given = fc.record({ outputs: fc.boolean(), lastH: fc.boolean(), lastCell: fc.boolean() });

function engineProperty(device: DeviceLike) {
  return fc.property(sequenceCase, dtype, layouts, given, fc.integer({ min: 0, max: 1 << 20 }), (c, dt, lay, g, seed) => {
    const { steps: T, batch: B, features: F, state: S } = c;
    using inputs = makeSequence([T, B, F], lay.inputs, seed, dt, device);
    using weights = makeWeights(S, F, lay.weights, seed + 1, dt, device);
    using bias = makeInput([3 * S], lay.bias, seed + 2, dt, device);
    using h0 = makeInput([B, S], lay.h0, seed + 3, dt, device);
    using c0 = makeInput([B, S], lay.c0, seed + 4, dt, device);
    using gradOutputs = g.outputs ? makeSequence([T, B, S], lay.gradOutputs, seed + 5, dt, device) : undefined;
    using gradLastH = g.lastH ? makeInput([B, S], lay.gradLast, seed + 6, dt, device) : undefined;
    using gradLastCell = g.lastCell ? makeInput([B, S], lay.gradLast, seed + 7, dt, device) : undefined;
    const tol = sequenceTolerance(dt, T);
    const at = `${dt} T=${T} ${B}x${F}x${S} ${JSON.stringify(lay)} ${JSON.stringify(g)}`;

    using fw = lltmSequenceForward(inputs, weights, bias, h0, c0);
    using bw = lltmSequenceBackward(gradOutputs, gradLastH, gradLastCell, fw.reserve!, inputs, weights, h0);
    const ref = referenceSequence(inputs, weights, bias, h0, c0, gradOutputs, gradLastH, gradLastCell);
    const engine = {
      outputs: fw.outputs, lastH: fw.lastH, lastCell: fw.lastCell, dInputs: bw.dInputs, dWeights: bw.dWeights,
      dBias: bw.dBias, dH0: bw.dH0, dC0: bw.dC0,
    };
    const magnitudeTol = magnitudeTolerance(dt, T);
    const magnitude = (name: string): Magnitude | undefined => {
      const values = ref.magnitudes[name as Gradient];
      return values && { values, tol: magnitudeTol };
    };
    // The per-step path (one native call per step) on the same numbers.
    using module = new LLTMLayer(F, S, { dtype: dt, device });
    module.weights.copyFrom(weights);
    module.bias.copyFrom(bias);
    using zerosBS = Tensor.zeros([B, S], { dtype: dt, device });
    using seq = module.sequence(inputs, [h0, c0], { perStep: true });
    using steps = seq.backward(gradOutputs, [gradLastH ?? zerosBS, gradLastCell ?? zerosBS]);
    const perStep = {
      outputs: seq.outputs, lastH: seq.h, lastCell: seq.c, dInputs: steps.dInputs, dWeights: module.weightsGrad,
      dBias: module.biasGrad, dH0: steps.dH0, dC0: steps.dC0,
    };

    // Some cases are as far from float64 in any implementation of the dtype: a state the forward's
    // sums cancel to (c_{t-1} + z i near 0), or a gradient that vanishes through the recurrence (to
    // 1e-20 over 64 steps), which carries every step's rounding relative to itself. There the
    // per-step path's own error, four times over, is the bound.
    for (const [name, t] of Object.entries(engine)) {
      const expected = ref[name as keyof typeof engine];
      const why = mismatch(t.toTypedArray(), expected, tol, magnitude(name));
      if (why === undefined) continue;
      const attainable = 4 * relativeError(perStep[name as keyof typeof perStep].toTypedArray(), expected);
      assert(relativeError(t.toTypedArray(), expected) <= attainable, `${at} ${name} vs reference: ${why}`);
    }
    // Where the per-step path itself misses the reference (its backward forms 1 - tanh(c)^2, which
    // cancels once the cell saturates), the comparison with the reference above is the one that counts.
    for (const [name, t] of Object.entries(engine)) {
      const expected = perStep[name as keyof typeof perStep].toTypedArray();
      if (mismatch(expected, ref[name as keyof typeof engine], tol, magnitude(name)) !== undefined) continue;
      const why = mismatch(t.toTypedArray(), expected, tol, magnitude(name), 2);
      assert(why === undefined, `${at} ${name} vs per-step: ${why}`);
    }

    // Inference runs the same arithmetic without keeping anything.
    using inference = lltmSequenceForward(inputs, weights, bias, h0, c0, { training: false });
    assert(inference.reserve === undefined, "inference keeps no reserve");
    for (const name of ["outputs", "lastH", "lastCell"] as const) {
      check(`${at} inference ${name} vs training`, inference[name], fw[name].toTypedArray(), tol);
    }
  });
}

for (const [device, skip] of devices) {
  test(`sequence engine matches the float64 reference and the per-step path on ${device} (T 1..70, sizes, layouts, dtypes)`, () => {
    assertProperty(engineProperty(device), { numRuns: cases });
  }, { skip });

  test(`sequence inference equals training, with the input projection in several chunks, on ${device}`, () => {
    // B*3S = 12480 elements a step: the CPU's inference buffer holds 21 steps, so T = 50 takes three chunks.
    const [T, B, F, S] = [50, 64, 5, 65];
    for (const dt of ["float32", "float64"] as const) {
      using inputs = makeSequence([T, B, F], "batchMajor", 1, dt, device);
      using m = new LLTMLayer(F, S, { dtype: dt, device, seed: 2 });
      using h0 = Tensor.randn([B, S], { dtype: dt, device, seed: 3 });
      using c0 = Tensor.randn([B, S], { dtype: dt, device, seed: 4 });
      using training = lltmSequenceForward(inputs, m.weights, m.bias, h0, c0);
      using inference = lltmSequenceForward(inputs, m.weights, m.bias, h0, c0, { training: false });
      using perStep = m.sequence(inputs, [h0, c0], { perStep: true });
      for (const name of ["outputs", "lastH", "lastCell"] as const) {
        if (device === "cpu") assertEquals(Array.from(inference[name].toTypedArray()), Array.from(training[name].toTypedArray()), `${dt} ${name}`);
        else check(`${dt} inference ${name}`, inference[name], training[name].toTypedArray(), sequenceTolerance(dt, T));
      }
      check(`${dt} outputs vs per-step`, training.outputs, perStep.outputs.toTypedArray(), sequenceTolerance(dt, T));
      check(`${dt} last cell vs per-step`, training.lastCell, perStep.c.toTypedArray(), sequenceTolerance(dt, T));
    }
  }, { skip });

  test(`lltmSequenceBackwardAccumulate adds the parameter gradients to what they hold, on ${device}`, () => {
    const [T, B, F, S] = [9, 3, 4, 7];
    const dt: DType = "float64";
    using inputs = Tensor.randn([T, B, F], { dtype: dt, device, seed: 1 });
    using m = new LLTMLayer(F, S, { dtype: dt, device, seed: 2 });
    using h0 = Tensor.randn([B, S], { dtype: dt, device, seed: 3 });
    using c0 = Tensor.randn([B, S], { dtype: dt, device, seed: 4 });
    using go = Tensor.randn([T, B, S], { dtype: dt, device, seed: 5 });
    using fw = lltmSequenceForward(inputs, m.weights, m.bias, h0, c0);
    using plain = lltmSequenceBackward(go, undefined, undefined, fw.reserve!, inputs, m.weights, h0);
    using dW = Tensor.randn([3 * S, S + F], { dtype: dt, device, seed: 6 });
    using dB = Tensor.randn([3 * S], { dtype: dt, device, seed: 7 });
    const before = [dW.toTypedArray(), dB.toTypedArray()];
    using acc = lltmSequenceBackwardAccumulate(go, undefined, undefined, fw.reserve!, inputs, m.weights, h0, dW, dB);
    const sum = (a: ArrayLike<number>, b: ArrayLike<number>) => Float64Array.from(a, (v, i) => v + b[i]!);
    check("d_weights", dW, sum(before[0]!, plain.dWeights.toTypedArray()), 1e-15);
    check("d_bias", dB, sum(before[1]!, plain.dBias.toTypedArray()), 1e-15);
    for (const name of ["dInputs", "dH0", "dC0"] as const) check(name, acc[name], plain[name].toTypedArray(), 1e-15);
  }, { skip });

  test(`gradients through time match central differences in float64 on ${device} (T 1..6)`, () => {
    const sizes = fc.record({
      steps: fc.integer({ min: 1, max: 6 }), batch: fc.integer({ min: 1, max: 3 }), features: fc.integer({ min: 1, max: 3 }),
      state: fc.integer({ min: 1, max: 4 }), seed: fc.integer({ min: 0, max: 1000 }),
    });
    assertProperty(fc.property(sizes, (s) => {
      const { errors, maxError } = sequenceGradcheck({ ...s, device });
      assert(maxError <= 1e-6, `${JSON.stringify(s)}: ${JSON.stringify(errors)}`);
    }), { numRuns: 6 });
  }, { skip });

  test(`LLTM.sequence with { grad: false } keeps nothing and refuses backward, on ${device}`, () => {
    using m = new LLTMLayer(3, 4, { device, seed: 1 });
    using x = Tensor.randn([5, 2, 3], { device, seed: 2 });
    const [h0, c0] = m.initialState(2);
    using seq = m.sequence(x, [h0, c0], { grad: false });
    using trained = m.sequence(x, [h0, c0]);
    check("outputs", seq.outputs, trained.outputs.toTypedArray(), 1e-6);
    let message = "";
    try {
      seq.backward();
    } catch (e) {
      message = (e as Error).message;
    }
    assert(/ran with \{ grad: false \}/.test(message), message);
    disposeAll(h0, c0);
  }, { skip });
}

// A one-step sequence runs as the cell (the step's kernels) in LLTMLayer.sequence and in the autograd
// lltmSequence: the same values as the sequence op, forward and backward, whichever gradients are given.
for (const [device, skip] of devices) {
  test(`a one-step sequence through LLTMLayer.sequence and lltmSequence matches the sequence op, on ${device}`, () => {
    for (const dt of ["float32", "float64"] as const) {
      const B = 3, F = 5, S = 7, tol = sequenceTolerance(dt, 1);
      using inputs = makeSequence([1, B, F], "strided", 1, dt, device);
      using weights = makeWeights(S, F, "transposed", 2, dt, device);
      using bias = makeInput([3 * S], "contiguous", 3, dt, device);
      using h0 = makeInput([B, S], "contiguous", 4, dt, device);
      using c0 = makeInput([B, S], "narrowed", 5, dt, device);
      using gradOutputs = makeSequence([1, B, S], "contiguous", 6, dt, device);
      using gradLastH = makeInput([B, S], "contiguous", 7, dt, device);
      using gradLastCell = makeInput([B, S], "contiguous", 8, dt, device);
      using zeros = Tensor.zeros([B, S], { dtype: dt, device });
      for (const [outs, last] of [[true, true], [true, false], [false, true]] as const) {
        const at = `${dt} gradOutputs ${outs} gradState ${last}`;
        using fw = lltmSequenceForward(inputs, weights, bias, h0, c0);
        using bw = lltmSequenceBackward(outs ? gradOutputs : undefined, last ? gradLastH : undefined, last ? gradLastCell : undefined, fw.reserve!, inputs, weights, h0);
        using m = new LLTMLayer(F, S, { dtype: dt, device });
        m.weights.copyFrom(weights);
        m.bias.copyFrom(bias);
        using seq = m.sequence(inputs, [h0, c0]);
        using g = seq.backward(outs ? gradOutputs : undefined, last ? [gradLastH, gradLastCell] : [zeros, zeros]);
        assertEquals(seq.outputs.shape, [1, B, S], "outputs' shape");
        assertEquals(g.dInputs.shape, [1, B, F], "dInputs' shape");
        check(`${at} outputs`, seq.outputs, fw.outputs.toTypedArray(), tol);
        check(`${at} h`, seq.h, fw.lastH.toTypedArray(), tol);
        check(`${at} c`, seq.c, fw.lastCell.toTypedArray(), tol);
        for (const [name, t, e] of [["dInputs", g.dInputs, bw.dInputs], ["dH0", g.dH0, bw.dH0], ["dC0", g.dC0, bw.dC0],
          ["dWeights", m.weightsGrad, bw.dWeights], ["dBias", m.biasGrad, bw.dBias]] as const) {
          check(`${at} ${name}`, t, e.toTypedArray(), tol);
        }
        fw.reserve!.dispose();
      }
      {
        using m = new LLTMLayer(F, S, { dtype: dt, device });
        using seq = m.sequence(inputs, [h0, c0]);
        using wide = Tensor.zeros([B, S + 1], { dtype: dt, device });
        assertThrowsLLTM(() => seq.backward(gradOutputs, [wide, zeros]), "SHAPE_MISMATCH",
          /^LLTMLayer\.sequence backward: 'gradState' must hold two \[3, 7\] tensors, got \[3, 8\]/);
      }
      // The autograd function: gradients on the output reach the inputs, the parameters and the state.
      using x = inputs.clone();
      using w = weights.clone();
      using h = h0.clone();
      for (const t of [x, w, h]) t.requiresGrad = true;
      using fw = lltmSequenceForward(inputs, weights, bias, h0, c0);
      using bw = lltmSequenceBackward(gradOutputs, undefined, undefined, fw.reserve!, inputs, weights, h0);
      const out = lltmSequence(x, w, bias, h, c0);
      check(`${dt} autograd output`, out.output, fw.outputs.toTypedArray(), tol);
      check(`${dt} autograd h`, out.h, fw.lastH.toTypedArray(), tol);
      check(`${dt} autograd c`, out.c, fw.lastCell.toTypedArray(), tol);
      out.output.backward(gradOutputs);
      check(`${dt} autograd dInputs`, x.grad!, bw.dInputs.toTypedArray(), tol);
      check(`${dt} autograd dWeights`, w.grad!, bw.dWeights.toTypedArray(), tol);
      check(`${dt} autograd dH0`, h.grad!, bw.dH0.toTypedArray(), tol);
      fw.reserve!.dispose();
      for (const t of [out.output, out.h, out.c]) t.dispose();
      // A loss on both the output and h: their gradients meet in the step's one backward.
      using x2 = inputs.clone();
      x2.requiresGrad = true;
      using fw2 = lltmSequenceForward(inputs, weights, bias, h0, c0);
      using bw2 = lltmSequenceBackward(gradOutputs, gradLastH, undefined, fw2.reserve!, inputs, weights, h0);
      const out2 = lltmSequence(x2, weights, bias, h0, c0);
      using weightedOutput = mul(out2.output, gradOutputs);
      using weightedH = mul(out2.h, gradLastH);
      using fromOutput = sum(weightedOutput);
      using fromH = sum(weightedH);
      using loss = add(fromOutput, fromH);
      loss.backward();
      check(`${dt} autograd dInputs from the output and h`, x2.grad!, bw2.dInputs.toTypedArray(), tol);
      fw2.reserve!.dispose();
      for (const t of [out2.output, out2.h, out2.c]) t.dispose();
    }
  }, { skip });
}

/** Strided views of fresh [a, b, c] tensors laid out c-major (each a transposed [c, b, a] tensor). */
function transposedOutputs(shapes: readonly (readonly number[])[], dt: DType): { views: Tensor[]; bases: Tensor[] } {
  const bases = shapes.map((s) => Tensor.full([...s].reverse(), Number.NaN, { dtype: dt }));
  return { views: bases.map((t) => (t.ndim === 3 ? t.transpose(0, 2) : t.ndim === 2 ? t.transpose() : t.narrow(0, 0, t.shape[0]!))), bases };
}

test("C ABI: strided outputs of the sequence calls receive the same values", () => {
  const [T, B, F, S] = [6, 3, 4, 5];
  const dt: DType = "float64";
  using inputs = Tensor.randn([T, B, F], { dtype: dt, seed: 1 });
  using m = new LLTMLayer(F, S, { dtype: dt, seed: 2 });
  using h0 = Tensor.randn([B, S], { dtype: dt, seed: 3 });
  using c0 = Tensor.randn([B, S], { dtype: dt, seed: 4 });
  using go = Tensor.randn([T, B, S], { dtype: dt, seed: 5 });
  using fw = lltmSequenceForward(inputs, m.weights, m.bias, h0, c0);
  using bw = lltmSequenceBackward(go, undefined, undefined, fw.reserve!, inputs, m.weights, h0);
  const lib = native();
  const reserve = fw.reserve!;
  const bytes = reserve.numel * 8;
  using block = new DescriptorBlock(11);
  const slots = (ts: Describable[]) => ts.map((t, i) => block.write(i, t));

  const f = transposedOutputs([[T, B, S], [B, S], [B, S]], dt);
  using strided = Tensor.empty([reserve.numel], { dtype: dt });
  const fs = slots([inputs, m.weights, m.bias, h0, c0, ...f.views]);
  assertEquals(lib.lltm_sequence_forward(fs[0]!, fs[1]!, fs[2]!, fs[3]!, fs[4]!, fs[5]!, fs[6]!, fs[7]!, strided.dataAddress, bytes, 1, 1, 0, 0), 0);
  [fw.outputs, fw.lastH, fw.lastCell].forEach((t, i) => assertEquals(f.views[i]!.toArray(), t.toArray(), `forward output ${i}`));

  const b = transposedOutputs([[T, B, F], [3 * S, S + F], [3 * S], [B, S], [B, S]], dt);
  const bs = slots([go, inputs, m.weights, h0, ...b.views]);
  assertEquals(lib.lltm_sequence_backward(bs[0]!, 0, 0, strided.dataAddress, bytes, bs[1]!, bs[2]!, bs[3]!, bs[4]!, bs[5]!, bs[6]!, bs[7]!, bs[8]!, 0, 1, 0, 0), 0);
  [bw.dInputs, bw.dWeights, bw.dBias, bw.dH0, bw.dC0].forEach((t, i) => assertEquals(b.views[i]!.toArray(), t.toArray(), `backward output ${i}`));
  disposeAll(...f.views, ...f.bases, ...b.views, ...b.bases);
});
