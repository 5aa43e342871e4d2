/**
 * The CPU sequence engine computes with subnormal numbers flushed to zero
 * (csrc/cpu/denormals.h): with saturated gates, whose slopes fall below the
 * smallest normal float32, its results still match the float64 reference,
 * and the calling thread gets its floating-point mode back, so that
 * JavaScript's own arithmetic keeps its subnormals after a call.
 */
import { lltmSequenceBackward, lltmSequenceForward } from "../ts/index.ts";
import { assert, test } from "./harness.ts";
import { makeInput, referenceError, tolerance, unitRoundoff } from "./helpers.ts";
import { referenceSequence } from "./sequence_reference.ts";

/** A float32 sequence on the CPU: inputs [T, B, F], weights, bias, h0, c0 and output gradients, normal values times `scale`. */
function sequenceCase(T: number, B: number, F: number, S: number, scale: { x: number; w: number; b: number }, seed: number) {
  const normal = (shape: number[], by: number, offset: number) => makeInput(shape, "contiguous", seed + offset, "float32", "cpu", by);
  const tensors = {
    x: normal([T, B, F], scale.x, 0), w: normal([3 * S, S + F], scale.w, 1), b: normal([3 * S], scale.b, 2),
    h0: normal([B, S], 1, 3), c0: normal([B, S], 1, 4), go: normal([T, B, S], 1, 5),
  };
  return { ...tensors, [Symbol.dispose]: () => Object.values(tensors).forEach((t) => t.dispose()) };
}

test("a CPU sequence with saturated gates (slopes below float32's smallest normal) matches the float64 reference", () => {
  // Gate sums of some hundreds: sigmoid'(g) ≈ e^-|g| is subnormal in float32 for |g| from 87.3 to 103.3.
  const T = 6, B = 5, F = 7, S = 9;
  using c = sequenceCase(T, B, F, S, { x: 2, w: 20, b: 12 }, 1);
  const { x, w, b, h0, c0, go } = c;
  // Step 0's input and forget gate sums, [h0, x_0] W^T + b: some must have subnormal slopes for the case to test them.
  const xv = x.toTypedArray(), wv = w.toTypedArray(), bv = b.toTypedArray(), hv = h0.toTypedArray();
  let subnormalSlopes = 0, largest = 0;
  for (let r = 0; r < B; r++) {
    for (let n = 0; n < 2 * S; n++) {
      let g = bv[n]!;
      for (let k = 0; k < S; k++) g += hv[r * S + k]! * wv[n * (S + F) + k]!;
      for (let k = 0; k < F; k++) g += xv[r * F + k]! * wv[n * (S + F) + S + k]!;
      if (Math.abs(g) > 87.4 && Math.abs(g) < 103.2) subnormalSlopes++;
      largest = Math.max(largest, Math.abs(g));
    }
  }
  assert(subnormalSlopes > 0, "no gate of step 0 has a slope in float32's subnormal range");
  using fw = lltmSequenceForward(x, w, b, h0, c0);
  using bw = lltmSequenceBackward(go, undefined, undefined, fw.reserve!, x, w, h0);
  const ref = referenceSequence(x, w, b, h0, c0, go);
  // A slope e^-|g| from a float32 gate sum g is off by about |g| u relative (u = 2^-24), whether or not
  // subnormals are flushed (the same case without flushing errs as much); the backward adds a few such terms.
  const tol = Math.max(tolerance.float32, 8 * largest * unitRoundoff.float32);
  const results = [
    ["outputs", fw.outputs, ref.outputs], ["dInputs", bw.dInputs, ref.dInputs], ["dWeights", bw.dWeights, ref.dWeights],
    ["dBias", bw.dBias, ref.dBias], ["dH0", bw.dH0, ref.dH0], ["dC0", bw.dC0, ref.dC0],
  ] as const;
  for (const [name, actual, expected] of results) {
    const values = actual.toTypedArray();
    assert(values.every(Number.isFinite), `${name}: not finite`);
    const err = referenceError(values, expected);
    assert(err <= tol, `${name}: error ${err} against the float64 reference (tolerance ${tol})`);
  }
});

test("after CPU sequence calls, JavaScript's arithmetic on this thread still makes and takes subnormals", () => {
  using c = sequenceCase(4, 3, 2, 40, { x: 1, w: 0.3, b: 0.3 }, 7);
  const { x, w, b, h0, c0, go } = c;
  using fw = lltmSequenceForward(x, w, b, h0, c0);
  lltmSequenceBackward(go, undefined, undefined, fw.reserve!, x, w, h0).dispose();
  // Read at run time, so that no compiler folds the arithmetic below.
  const [smallestNormal, subnormal] = JSON.parse("[2.2250738585072014e-308, 4e-320]") as [number, number];
  assert(smallestNormal / 4 > 0, "a subnormal result was flushed to zero: the call left flush-to-zero on");
  assert(subnormal * 2 > subnormal, "a subnormal operand was read as zero: the call left denormals-are-zero on");
});
