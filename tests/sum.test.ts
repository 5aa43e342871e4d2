/**
 * sum and mean of every element (the SUM op of csrc/lltm_ops.def, summed in
 * double) against float64 over sizes, layouts and dtypes; their backward
 * against central differences; int32 refused by name.
 */
import fc from "fast-check";

import { type DeviceLike, type DType, mean, sum, sumBackward, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM } from "./harness.ts";
import { layout, makeInput, smallSize } from "./helpers.ts";
import { centralDifferences, ints, maxRelative, testOnDevices, values } from "./op_helpers.ts";

const dtypes = fc.constantFrom<DType>("float32", "float64");
// The library sums in double, in an order of its own: whatever the order, the
// n - 1 additions stay within (n - 1) 2^-53 of the sum of magnitudes. Then one
// rounding to the dtype (float32's counted at twice its 2^-24).
const resultRounding: Record<string, number> = { float32: 2 ** -23, float64: 2 ** -53 };

// The reference sum with Neumaier's compensation: within one rounding of the
// exact sum, so that the tolerance is the library's error alone (a plain
// left-to-right sum in float64 errs as much as the order it takes).
function compensatedSum(v: ArrayLike<number>): number {
  let s = 0, c = 0;
  for (let i = 0; i < v.length; ++i) {
    const a = v[i]!, t = s + a;
    c += Math.abs(s) >= Math.abs(a) ? s - t + a : a - t + s;
    s = t;
  }
  return s + c;
}

function matchesReference(device: DeviceLike): void {
  fc.assert(
    fc.property(smallSize, smallSize, dtypes, layout, fc.nat(1 << 20), (R, C, dt, lx, seed) => {
      using x = makeInput([R, C], lx, seed, dt, device);
      const v = values(x);
      const exact = compensatedSum(v), magnitude = v.reduce((a, b) => a + Math.abs(b), 0);
      const tolerance = resultRounding[dt]! + (v.length - 1) * 2 ** -53;
      using s = sum(x);
      using m = mean(x);
      assertEquals(s.shape, [1]);
      assert(Math.abs(values(s)[0]! - exact) <= tolerance * magnitude, `${dt} sum ${R}x${C}`);
      // The mean's division rounds once more.
      assert(Math.abs(values(m)[0]! - exact / v.length) <= (tolerance + 2 ** -53) * magnitude / v.length, `${dt} mean ${R}x${C}`);
    }),
    { numRuns: 40 },
  );
}

testOnDevices("sum and mean match float64 (sizes, layouts, dtypes)", matchesReference);

testOnDevices("sumBackward spreads the gradient, and matches central differences for sum and mean", (device) => {
  using xt = Tensor.randn([3, 5], { dtype: "float64", seed: 1 });
  const x = values(xt);
  using g = Tensor.fromArray([1.5], { dtype: "float64", device });
  for (const isMean of [false, true]) {
    using d = sumBackward(g, [3, 5], { mean: isMean });
    assertEquals(d.shape, [3, 5]);
    const f = (v: Float64Array) => 1.5 * v.reduce((a, b) => a + b, 0) / (isMean ? v.length : 1);
    assert(maxRelative(values(d), centralDifferences(f, x)) <= 1e-8, isMean ? "mean" : "sum");
  }
});

testOnDevices("sum refuses int32 by name", (device) => {
  using i = ints([1, 2], undefined, device);
  assertThrowsLLTM(() => sum(i), "INVALID_DTYPE", /^sum: 'x' has dtype int32/);
  assertThrowsLLTM(() => mean(i), "INVALID_DTYPE", /^mean: 'x' has dtype int32/);
});
