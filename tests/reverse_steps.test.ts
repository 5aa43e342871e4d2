/**
 * reverseSteps (the REVERSE_STEPS op of csrc/lltm_ops.def, which the stacked ops' second direction reads its
 * input through): against the reversal on the host over sizes, lengths, layouts and dtypes on the CPU and on CUDA
 * where present; its own inverse; a bad length refused by name before anything is written.
 */
import fc from "fast-check";
import { type DType, reverseSteps, Tensor } from "../ts/index.ts";
import { assert, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";
import { assertProperty, makeSequence, sequenceLayout } from "./sequence_helpers.ts";

for (const device of ["cpu", "cuda"] as const) {
  const skip = device === "cuda" ? cudaSkipReason() : false;
  test(`${device}: reverseSteps reverses each sample within its length, any layout and dtype, and undoes itself`, () => {
    assertProperty(
      fc.property(
        fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 7 }), sequenceLayout,
        fc.constantFrom<DType>("float64", "float32", "bfloat16"), fc.boolean(), fc.integer({ min: 0, max: 1000 }),
        (T, B, X, layout, dtype, withLengths, seed) => {
          using x = makeSequence([T, B, X], layout, seed, dtype, device);
          const lengthValues = Int32Array.from({ length: B }, (_, b) => (withLengths ? 1 + ((b * 5 + seed) % T) : T));
          using lengths = withLengths ? Tensor.fromTypedArray(lengthValues, [B], { dtype: "int32", device }) : undefined;
          using y = reverseSteps(x, lengths);
          const xv = x.toTypedArray(), yv = y.toTypedArray();
          for (let t = 0; t < T; t++) {
            for (let b = 0; b < B; b++) {
              const from = t < lengthValues[b]! ? lengthValues[b]! - 1 - t : t;
              for (let e = 0; e < X; e++) {
                const got = yv[(t * B + b) * X + e]!, want = xv[(from * B + b) * X + e]!;
                assert(got === want, `${dtype} ${layout} [${t}, ${b}, ${e}]: ${got}, expected x[${from}, ${b}, ${e}] = ${want}`);
              }
            }
          }
          using back = reverseSteps(y, lengths);
          const bv = back.toTypedArray();
          for (let i = 0; i < xv.length; i++) assert(bv[i] === xv[i], `${dtype} ${layout}: reversed twice differs at ${i}`);
        },
      ),
      { numRuns: 40, seed: 23 },
    );
  }, { skip });
}

test("reverseSteps refuses a length outside 1..T by name", () => {
  using x = Tensor.ones([4, 3, 2], { dtype: "float64" });
  using lengths = Tensor.fromTypedArray(Int32Array.from([4, 5, 1]), [3], { dtype: "int32" });
  assertThrowsLLTM(() => reverseSteps(x, lengths), "INVALID_ARGUMENT", /reverseSteps: 'lengths' holds 5 at \[1\]; expected a length from 1 to T = 4/);
  using short = Tensor.fromTypedArray(Int32Array.from([4, 0, 1]), [3], { dtype: "int32" });
  assertThrowsLLTM(() => reverseSteps(x, short), "INVALID_ARGUMENT", /'lengths' holds 0 at \[1\]/);
});
