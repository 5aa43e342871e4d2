/**
 * multinomial (the MULTINOMIAL op of csrc/lltm_ops.def): draws in the
 * proportions of the weights (frequencies over many rows within 5 standard
 * deviations), never a zero weight, reproducible from a Generator's seed and
 * offset (and the same on both devices), unnormalised weights accepted, bad
 * rows refused by index.
 */
import fc from "fast-check";

import { type DeviceLike, Generator, multinomial, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";
import { testOnDevices } from "./op_helpers.ts";

function rowsOf(weights: readonly number[], rows: number, device: DeviceLike): Tensor {
  const flat = new Float64Array(rows * weights.length);
  for (let n = 0; n < rows; n++) flat.set(weights, n * weights.length);
  return Tensor.fromTypedArray(flat, [rows, weights.length], { dtype: "float32", device });
}

testOnDevices("multinomial draws in the weights' proportions and never a zero weight", (device) => {
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.constant(0), fc.double({ min: 0.05, max: 5, noNaN: true })), { minLength: 1, maxLength: 7 }), fc.nat(1000), (weights, seed) => {
      fc.pre(weights.some((w) => w > 0));
      const rows = 4000;
      using p = rowsOf(weights, rows, device);
      using i = multinomial(p, { generator: new Generator(seed) });
      const counts = new Array<number>(weights.length).fill(0);
      for (const k of i.toTypedArray()) counts[k]!++;
      const total = weights.reduce((a, b) => a + b, 0);
      weights.forEach((w, k) => {
        const q = w / total, sd = Math.sqrt(rows * q * (1 - q));
        if (w === 0) assertEquals(counts[k], 0, `weight 0 drawn at ${k}`);
        else assert(Math.abs(counts[k]! - rows * q) <= 5 * sd + 1, `index ${k}: ${counts[k]} of ${rows}, expected ${rows * q}`);
      });
    }),
    { numRuns: 15 },
  );
});

testOnDevices("a Generator reproduces draws from its seed and offset, and advances by the rows drawn", (device) => {
  using p = rowsOf([1, 2, 3, 4, 5, 6, 7, 8], 64, device);
  const g = new Generator(42);
  using first = multinomial(p, { generator: g });
  assertEquals(g.offset, 64);
  using second = multinomial(p, { generator: g });
  using again = multinomial(p, { generator: new Generator(42) });
  assertEquals([...again.toTypedArray()], [...first.toTypedArray()]);
  assert([...second.toTypedArray()].some((v, k) => v !== first.toTypedArray()[k]), "the second draw differs");
  using shaped = rowsOf([1, 1], 6, device);
  using three = shaped.reshape([2, 3, 2]);
  using drawn = multinomial(three);
  assertEquals(drawn.shape, [2, 3]);
});

test("the CPU and CUDA draw the same indices from the same generator", () => {
  using p = rowsOf([0.1, 0.2, 0.3, 0.4, 0, 1e-3], 500, "cpu");
  using onGpu = p.to("cuda");
  using a = multinomial(p, { generator: new Generator(7, 123) });
  using b = multinomial(onGpu, { generator: new Generator(7, 123) });
  assertEquals([...b.toTypedArray()], [...a.toTypedArray()]);
}, { skip: cudaSkipReason() });

testOnDevices("multinomial refuses bad weights by row and bad generators by name", (device) => {
  for (const [row, message] of [[[1, -1], /^multinomial: 'probs' row 1 has a negative, infinite or NaN weight/], [[0, 0], /^multinomial: 'probs' row 1 has no positive weight/], [[1, NaN], /row 1 has a negative, infinite or NaN/]] as const) {
    using p = Tensor.fromArray([[1, 1], [...row]], { device });
    assertThrowsLLTM(() => multinomial(p), "INVALID_ARGUMENT", message);
  }
  assertThrowsLLTM(() => new Generator(-1), "INVALID_ARGUMENT", /^Generator: seed must be an integer/);
  using p = Tensor.ones([1, 2], { device });
  assertThrowsLLTM(() => multinomial(p, { generator: {} as Generator }), "INVALID_ARGUMENT", /^multinomial: 'generator' must be a Generator/);
});
