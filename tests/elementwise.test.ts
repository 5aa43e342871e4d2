/**
 * add, sub, mul and scale (the ADD, MUL and SCALE ops of csrc/lltm_ops.def):
 * against float64 over sizes, layouts and dtypes; b broadcast from a scalar
 * or a row; in-place aliasing; mulBackward against central differences;
 * bad input refused by name.
 */
import fc from "fast-check";

import { add, type DeviceLike, type DType, mul, mulBackward, scale, sub, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM } from "./harness.ts";
import { layout, makeInput, referenceError, smallSize, tolerance } from "./helpers.ts";
import { centralDifferences, ints, maxRelative, testOnDevices, values } from "./op_helpers.ts";

const dtypes = fc.constantFrom<DType>("float32", "float64", "bfloat16", "float16");

function matchesReference(device: DeviceLike): void {
  fc.assert(
    fc.property(smallSize, smallSize, dtypes, layout, layout, fc.double({ min: -4, max: 4, noNaN: true }), fc.nat(1 << 20), (R, C, dt, la, lb, alpha, seed) => {
      using a = makeInput([R, C], la, seed, dt, device);
      using b = makeInput([R, C], lb, seed + 1, dt, device);
      const av = values(a), bv = values(b);
      // Each result is one rounding of an exact float64 value of the inputs.
      const tol = tolerance[dt];
      const check = (what: string, t: Tensor, f: (x: number, y: number) => number) => {
        assertEquals(t.shape, [R, C]);
        assertEquals(t.dtype, dt);
        const err = referenceError(values(t), av.map((x, i) => f(x, bv[i]!)));
        assert(err <= tol, `${what} ${dt} ${R}x${C}: ${err}`);
      };
      using s = add(a, b, { alpha });
      check("add", s, (x, y) => x + alpha * y);
      using d = sub(a, b);
      check("sub", d, (x, y) => x - y);
      using p = mul(a, b);
      check("mul", p, (x, y) => x * y);
      using q = scale(a, alpha);
      check("scale", q, (x) => x * alpha);
    }),
    { numRuns: 30 },
  );
}

testOnDevices("add, sub, mul and scale match float64 (sizes, layouts, dtypes)", matchesReference);

testOnDevices("b broadcasts from a scalar or a row; mixed float32 and half inputs give float32", (device) => {
  using a = Tensor.fromArray([[1, 2, 3], [4, 5, 6]], { dtype: "float64", device });
  using row = Tensor.fromArray([10, 20, 30], { dtype: "float64", device });
  using one = Tensor.fromArray([2], { dtype: "float64", device });
  using s = add(a, row);
  assertEquals(s.toArray(), [[11, 22, 33], [14, 25, 36]]);
  using p = mul(a, one);
  assertEquals(p.toArray(), [[2, 4, 6], [8, 10, 12]]);
  using h = Tensor.fromArray([1, 2, 3], { dtype: "bfloat16", device });
  using f = Tensor.fromArray([0.5, 0.5, 0.5], { device });
  using m = add(f, h);
  assertEquals(m.dtype, "float32");
  assertEquals([...values(m)], [1.5, 2.5, 3.5]);
  using col = Tensor.fromArray([[1], [2], [3]], { dtype: "float64", device });
  assertThrowsLLTM(() => add(a, col), "SHAPE_MISMATCH", /^add: 'b' has shape \[3, 1\], which neither equals nor broadcasts to 'a''s \[2, 3\]/);
});

testOnDevices("mulBackward matches central differences in float64", (device) => {
  using at = Tensor.randn([2, 3], { dtype: "float64", seed: 1 }), bt = Tensor.randn([2, 3], { dtype: "float64", seed: 2 });
  using gt = Tensor.randn([2, 3], { dtype: "float64", seed: 3, device });
  const a = values(at), b = values(bt), g = values(gt);
  using ad = at.to(device), bd = bt.to(device);
  using grads = mulBackward(gt, ad, bd);
  const lossA = (x: Float64Array) => x.reduce((s, v, i) => s + v * b[i]! * g[i]!, 0);
  const lossB = (x: Float64Array) => x.reduce((s, v, i) => s + a[i]! * v * g[i]!, 0);
  assert(maxRelative(values(grads.dA), centralDifferences(lossA, a)) <= 1e-8, "dA");
  assert(maxRelative(values(grads.dB), centralDifferences(lossB, b)) <= 1e-8, "dB");
});

testOnDevices("elementwise ops refuse int32, other devices' tensors and disposed ones by name", (device) => {
  using a = Tensor.ones([2], { device });
  using i = ints([1, 2], undefined, device);
  assertThrowsLLTM(() => add(a, i), "INVALID_DTYPE", /^add: 'b' has dtype int32, which is not a float type/);
  assertThrowsLLTM(() => mul(i, a), "INVALID_DTYPE", /^mul: 'a' has dtype int32/);
  assertThrowsLLTM(() => scale(i, 2), "INVALID_DTYPE", /^scale: 'x' has dtype int32/);
  const gone = Tensor.ones([2], { device });
  gone.dispose();
  assertThrowsLLTM(() => sub(a, gone), "DISPOSED", /^sub: 'b' has been disposed/);
});
