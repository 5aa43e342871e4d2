/**
 * softmax and softmaxBackward (the SOFTMAX ops of csrc/lltm_ops.def) over
 * the last dimension: against float64 over sizes, layouts and dtypes,
 * stable at large values, the backward against central differences.
 */
import fc from "fast-check";

import { type DeviceLike, type DType, softmax, softmaxBackward, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM } from "./harness.ts";
import { layout, makeInput, smallSize } from "./helpers.ts";
import { centralDifferences, maxRelative, testOnDevices, values } from "./op_helpers.ts";

function referenceSoftmax(x: Float64Array, V: number): Float64Array {
  const y = new Float64Array(x.length);
  for (let n = 0; n < x.length / V; n++) {
    const row = x.subarray(n * V, (n + 1) * V);
    const max = Math.max(...row);
    const sum = row.reduce((s, v) => s + Math.exp(v - max), 0);
    row.forEach((v, i) => (y[n * V + i] = Math.exp(v - max) / sum));
  }
  return y;
}

const dtypes = fc.constantFrom<DType>("float32", "float64");
const tolerances: Record<string, number> = { float32: 2e-6, float64: 1e-14 };

function matchesReference(device: DeviceLike): void {
  fc.assert(
    fc.property(smallSize, smallSize, dtypes, layout, fc.nat(1 << 20), (N, V, dt, lx, seed) => {
      using x = makeInput([N, V], lx, seed, dt, device, 4);
      using y = softmax(x);
      assertEquals(y.shape, [N, V]);
      const ref = referenceSoftmax(values(x), V);
      assert(maxRelative(values(y), ref) <= tolerances[dt]!, `${dt} ${N}x${V}`);
      using g = makeInput([N, V], lx, seed + 1, dt, device);
      using d = softmaxBackward(g, y);
      const gv = values(g), yv = values(y);
      const expected = new Float64Array(N * V);
      for (let n = 0; n < N; n++) {
        let dot = 0;
        for (let v = 0; v < V; v++) dot += yv[n * V + v]! * gv[n * V + v]!;
        for (let v = 0; v < V; v++) expected[n * V + v] = yv[n * V + v]! * (gv[n * V + v]! - dot);
      }
      assert(maxRelative(values(d), expected) <= 4 * tolerances[dt]!, `${dt} backward ${N}x${V}`);
    }),
    { numRuns: 40 },
  );
}

testOnDevices("softmax and its backward match float64 (sizes, layouts, dtypes)", matchesReference);

testOnDevices("softmaxBackward matches central differences of softmax in float64; leading dimensions kept", (device) => {
  using xt = Tensor.randn([2, 2, 3], { dtype: "float64", seed: 5 });
  using gt = Tensor.randn([2, 2, 3], { dtype: "float64", seed: 6, device });
  const x = values(xt), g = values(gt);
  const loss = (v: Float64Array) => {
    using t = Tensor.fromTypedArray(v, [2, 2, 3], { device });
    using y = softmax(t);
    return values(y).reduce((s, e, i) => s + e * g[i]!, 0);
  };
  using xd = xt.to(device);
  using y = softmax(xd);
  assertEquals(y.shape, [2, 2, 3]);
  using d = softmaxBackward(gt, y);
  assertEquals(d.shape, [2, 2, 3]);
  assert(maxRelative(values(d), centralDifferences(loss, x)) <= 1e-8, "central differences");
});

testOnDevices("softmax is stable at large values and refuses a wrong gradient's shape by name", (device) => {
  using x = Tensor.fromArray([[1e30, 1e30, -1e30]], { device });
  using y = softmax(x);
  assertEquals([...values(y)], [0.5, 0.5, 0]);
  using g = Tensor.ones([2, 3], { device });
  assertThrowsLLTM(() => softmaxBackward(g, y), "SHAPE_MISMATCH", /^softmaxBackward: 'gradY' must have shape \[1, 3\]/);
});
