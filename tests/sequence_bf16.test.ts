/**
 * The CPU sequence engine in bfloat16 (csrc/cpu/sequence_bf16.cpp: vdpbf16ps
 * products with float32 sums, the cell's math and cell state in float32, on
 * CPUs with AVX512_BF16; elsewhere, and for strided views, the same calls
 * are staged through float32) against the float64 reference on the same
 * rounded inputs: T up to 70, sizes across the 8-row tiles, the 32-unit
 * panels and the 16-lane vectors, odd pairs (S, F, T*B), with and without
 * lengths and each optional gradient, parameter gradients accumulated in
 * bfloat16 or float32 (mixed precision's), and views that send the forward and
 * the backward down different paths (a strided gradient stages the backward
 * only), which read one another's reserve.
 *
 * Tolerances, in the norm-based error of tests/helpers.ts, from bfloat16's
 * unit roundoff u = 2^-8 ≈ 3.9e-3: the outputs are rounded once from float32
 * (u), and every step's h is rounded to bfloat16 before the next step's
 * product (the output's own rounding), an error of u per step that the
 * recurrence carries but, with weights scaled by 1/sqrt(S+F), damps: the
 * forward stays within 2.5u (tolerance.bfloat16, 1e-2) up to 64 steps
 * (measured: at most 1.8e-3), the bound growing by that much per further 64
 * steps (sequenceTolerance). The backward rounds the gate gradients to
 * bfloat16 before its products, then the results: two roundings, so twice
 * that (2e-2 at 64 steps, the issue's bound; measured: at most 5.7e-3). A
 * gradient whose terms cancel, or a cell (and its h) whose start and updates
 * cancel, is held to the same bound relative to its terms' magnitudes, as
 * each term carries those roundings.
 */
import fc from "fast-check";

import { type DType, lltmSequenceBackward, lltmSequenceBackwardAccumulate, lltmSequenceForward, Tensor } from "../ts/index.ts";
import { assert, assertEquals, test } from "./harness.ts";
import { makeInput } from "./helpers.ts";
import {
  assertProperty, makeSequence, makeWeights, mismatch, sequenceCase, type SequenceLayout, sequenceTolerance,
} from "./sequence_helpers.ts";
import { type Gradient, referenceSequence } from "./sequence_reference.ts";

const forwardTol = (T: number) => sequenceTolerance("bfloat16", T);
const backwardTol = (T: number) => 2 * sequenceTolerance("bfloat16", T);

/** Mostly contiguous (the native engine); now and then a view that stages the call through float32. */
const view: fc.Arbitrary<SequenceLayout> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<SequenceLayout>("contiguous") },
  { weight: 1, arbitrary: fc.constantFrom<SequenceLayout>("batchMajor", "strided") },
);

const int32 = (values: readonly number[]) => Tensor.fromTypedArray(Int32Array.from(values), [values.length], { dtype: "int32" });

const engineCase = sequenceCase.chain((c) =>
  fc.record({
    c: fc.constant(c),
    lengths: fc.option(fc.array(fc.integer({ min: 1, max: c.steps }), { minLength: c.batch, maxLength: c.batch }), { nil: undefined }),
    inputs: view,
    gradOutputs: view,
    given: fc.record({ outputs: fc.boolean(), lastH: fc.boolean(), lastCell: fc.boolean() }),
    accumulate: fc.boolean(),
    paramGrads: fc.constantFrom<DType>("bfloat16", "float32"),
    seed: fc.integer({ min: 0, max: 1 << 20 }),
  })
);

test("bfloat16 sequences match the float64 reference on the same rounded inputs", () => {
  const property = fc.property(engineCase, ({ c, lengths, inputs: inputsLayout, gradOutputs: gradLayout, given, accumulate, paramGrads, seed }) => {
    const { steps: T, batch: B, features: F, state: S } = c;
    const dt = "bfloat16";
    using inputs = makeSequence([T, B, F], inputsLayout, seed, dt, "cpu");
    using weights = makeWeights(S, F, "contiguous", seed + 1, dt, "cpu");
    using bias = makeInput([3 * S], "contiguous", seed + 2, dt);
    using h0 = makeInput([B, S], "contiguous", seed + 3, dt);
    using c0 = makeInput([B, S], "contiguous", seed + 4, dt);
    using gradOutputs = given.outputs ? makeSequence([T, B, S], gradLayout, seed + 5, dt, "cpu") : undefined;
    using gradLastH = given.lastH ? makeInput([B, S], "contiguous", seed + 6, dt) : undefined;
    using gradLastCell = given.lastCell ? makeInput([B, S], "contiguous", seed + 7, dt) : undefined;
    using len = lengths && int32(lengths);
    const options = len ? { lengths: len } : {};
    const at = `T=${T} ${B}x${F}x${S} lengths=${lengths} inputs ${inputsLayout} gradOutputs ${gradLayout} ${JSON.stringify(given)} accumulate ${accumulate ? `into ${paramGrads}` : false}`;

    using fw = lltmSequenceForward(inputs, weights, bias, h0, c0, options);
    const ref = referenceSequence(inputs, weights, bias, h0, c0, gradOutputs, gradLastH, gradLastCell, lengths);
    for (const name of ["outputs", "lastH", "lastCell"] as const) {
      assert(fw[name].dtype === "bfloat16", `${at}: ${name} is ${fw[name].dtype}`);
      const why = mismatch(fw[name].toTypedArray(), ref[name], forwardTol(T), { values: ref.forwardMagnitudes[name], tol: forwardTol(T) });
      assert(why === undefined, `${at} ${name}: ${why}`);
    }
    using inference = lltmSequenceForward(inputs, weights, bias, h0, c0, { ...options, training: false });
    for (const name of ["outputs", "lastH", "lastCell"] as const) {
      assertEquals(Array.from(inference[name].toTypedArray()), Array.from(fw[name].toTypedArray()), `${at}: inference ${name} is training's`);
    }

    // Accumulating into gradients that hold the reference's once (bfloat16, or float32 as mixed
    // precision keeps them beside bfloat16 weights): the result is twice it.
    using dWeights = accumulate ? Tensor.fromTypedArray(Float32Array.from(ref.dWeights), [3 * S, S + F], { dtype: paramGrads }) : undefined;
    using dBias = accumulate ? Tensor.fromTypedArray(Float32Array.from(ref.dBias), [3 * S], { dtype: paramGrads }) : undefined;
    using bw = accumulate
      ? lltmSequenceBackwardAccumulate(gradOutputs, gradLastH, gradLastCell, fw.reserve!, inputs, weights, h0, dWeights!, dBias!, options)
      : undefined;
    using full = accumulate ? undefined : lltmSequenceBackward(gradOutputs, gradLastH, gradLastCell, fw.reserve!, inputs, weights, h0, options);
    const state = (bw ?? full)!;
    const grads: [Gradient, Tensor, number][] = [["dInputs", state.dInputs, 1], ["dH0", state.dH0, 1], ["dC0", state.dC0, 1]];
    if (full) grads.push(["dWeights", full.dWeights, 1], ["dBias", full.dBias, 1]);
    else grads.push(["dWeights", dWeights!, 2], ["dBias", dBias!, 2]);
    for (const [name, t, times] of grads) {
      const expected = ref[name].map((v) => times * v), magnitudes = ref.magnitudes[name].map((v) => times * v);
      const why = mismatch(t.toTypedArray(), expected, backwardTol(T), { values: magnitudes, tol: backwardTol(T) });
      assert(why === undefined, `${at} ${name}: ${why}`);
    }
  });
  assertProperty(property, { numRuns: 60 });
});

test("a 64-step bfloat16 sequence at 16x32x128 stays within 1e-2 forward and 2e-2 backward of float64", () => {
  const [T, B, F, S] = [64, 16, 32, 128];
  using inputs = makeSequence([T, B, F], "contiguous", 11, "bfloat16", "cpu");
  using weights = makeWeights(S, F, "contiguous", 12, "bfloat16", "cpu");
  using bias = makeInput([3 * S], "contiguous", 13, "bfloat16");
  using h0 = makeInput([B, S], "contiguous", 14, "bfloat16");
  using c0 = makeInput([B, S], "contiguous", 15, "bfloat16");
  using gradOutputs = makeSequence([T, B, S], "contiguous", 16, "bfloat16", "cpu");
  using fw = lltmSequenceForward(inputs, weights, bias, h0, c0);
  using bw = lltmSequenceBackward(gradOutputs, undefined, undefined, fw.reserve!, inputs, weights, h0);
  const ref = referenceSequence(inputs, weights, bias, h0, c0, gradOutputs);
  for (const [name, t, expected, tol] of [
    ["outputs", fw.outputs, ref.outputs, 1e-2], ["lastCell", fw.lastCell, ref.lastCell, 1e-2],
    ["dInputs", bw.dInputs, ref.dInputs, 2e-2], ["dWeights", bw.dWeights, ref.dWeights, 2e-2],
    ["dBias", bw.dBias, ref.dBias, 2e-2], ["dH0", bw.dH0, ref.dH0, 2e-2], ["dC0", bw.dC0, ref.dC0, 2e-2],
  ] as const) {
    const why = mismatch(t.toTypedArray(), expected, tol);
    assert(why === undefined, `${name}: ${why}`);
  }
});
