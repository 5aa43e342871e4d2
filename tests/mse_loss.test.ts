/** mseLoss and mseLossBackward (composed of the ADD, MUL and SUM ops) against float64 and central differences. */
import fc from "fast-check";

import { type DeviceLike, type DType, mseLoss, mseLossBackward, type Reduction, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM } from "./harness.ts";
import { layout, makeInput, smallSize } from "./helpers.ts";
import { centralDifferences, maxRelative, testOnDevices, values } from "./op_helpers.ts";

const reductions = fc.constantFrom<Reduction>("none", "mean", "sum");
const tolerances: Record<string, number> = { float32: 1e-5, float64: 1e-13 };

function matchesReference(device: DeviceLike): void {
  fc.assert(
    fc.property(smallSize, smallSize, fc.constantFrom<DType>("float32", "float64"), layout, reductions, fc.nat(1 << 20), (R, C, dt, la, reduction, seed) => {
      using a = makeInput([R, C], la, seed, dt, device);
      using b = makeInput([R, C], "contiguous", seed + 1, dt, device);
      const sq = values(a).map((x, i) => (x - values(b)[i]!) ** 2);
      const sum = sq.reduce((s, v) => s + v, 0);
      using l = mseLoss(a, b, { reduction });
      const expected = reduction === "none" ? sq : Float64Array.of(reduction === "sum" ? sum : sum / sq.length);
      assertEquals(l.shape, reduction === "none" ? [R, C] : [1]);
      assert(maxRelative(values(l), expected) <= tolerances[dt]! * Math.max(1, reduction === "sum" ? sq.length : 1), `${dt} ${reduction} ${R}x${C}`);
    }),
    { numRuns: 30 },
  );
}

testOnDevices("mseLoss matches float64 (sizes, layouts, dtypes, reductions)", matchesReference);

testOnDevices("mseLossBackward matches central differences in float64, each reduction", (device) => {
  using at = Tensor.randn([2, 3], { dtype: "float64", seed: 1 }), bt = Tensor.randn([2, 3], { dtype: "float64", seed: 2, device });
  const a = values(at);
  for (const reduction of ["none", "mean", "sum"] as const) {
    using g = reduction === "none" ? Tensor.randn([2, 3], { dtype: "float64", seed: 3, device }) : Tensor.fromArray([0.7], { dtype: "float64", device });
    const gv = values(g);
    const loss = (v: Float64Array) => {
      using t = Tensor.fromTypedArray(v, [2, 3], { device });
      using l = mseLoss(t, bt, { reduction });
      return values(l).reduce((s, e, i) => s + e * gv[i]!, 0);
    };
    using ad = at.to(device);
    using d = mseLossBackward(g, ad, bt, { reduction });
    assert(maxRelative(values(d), centralDifferences(loss, a)) <= 1e-8, reduction);
  }
});

testOnDevices("mseLoss on the tape: a's gradient is mseLossBackward's and b's its negation, each reduction", (device) => {
  for (const reduction of ["none", "mean", "sum"] as const) {
    using a = Tensor.randn([3, 5], { dtype: "float64", seed: 11, device }).requiresGrad_();
    using b = Tensor.randn([3, 5], { dtype: "float64", seed: 12, device }).requiresGrad_();
    using g = reduction === "none" ? Tensor.randn([3, 5], { dtype: "float64", seed: 13, device }) : Tensor.fromArray([0.7], { dtype: "float64", device });
    using l = mseLoss(a, b, { reduction });
    l.backward(g);
    using expected = mseLossBackward(g, a.detach(), b.detach(), { reduction });
    assert(maxRelative(values(a.grad!), values(expected)) <= 1e-15, `${reduction}: a's gradient`);
    assert(maxRelative(values(b.grad!), values(expected).map((v) => -v)) <= 1e-15, `${reduction}: b's gradient`);
  }
});

testOnDevices("mseLoss refuses unequal shapes and a bad reduction by name", (device) => {
  using a = Tensor.zeros([2, 3], { device }), b = Tensor.zeros([3], { device });
  assertThrowsLLTM(() => mseLoss(a, b), "SHAPE_MISMATCH", /^mseLoss: 'b' has shape \[3\] but 'a' has \[2, 3\]/);
  assertThrowsLLTM(() => mseLoss(a, a, { reduction: "avg" as Reduction }), "INVALID_ARGUMENT", /^mseLoss: 'reduction' must be/);
});
