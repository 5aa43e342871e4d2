/** cat of two tensors along a dimension (the CAT op of csrc/lltm_ops.def): float and int32, any layout, bad input by name. */
import fc from "fast-check";

import { cat, type DeviceLike, type DType, type NestedArray, Tensor } from "../ts/index.ts";
import { assertEquals, assertThrowsLLTM } from "./harness.ts";
import { layout, makeInput } from "./helpers.ts";
import { ints, testOnDevices, values } from "./op_helpers.ts";

/** Nested arrays joined along dim d. */
function referenceCat(a: NestedArray, b: NestedArray, d: number): NestedArray {
  const as = a as NestedArray[], bs = b as NestedArray[];
  if (d === 0) return [...as, ...bs] as NestedArray;
  return as.map((row, i) => referenceCat(row, bs[i]!, d - 1)) as NestedArray;
}

const dim = fc.integer({ min: 1, max: 9 });

function matchesReference(device: DeviceLike): void {
  fc.assert(
    fc.property(dim, dim, dim, fc.boolean(), fc.constantFrom<DType>("float32", "float64", "float16"), layout, layout, fc.nat(1 << 20), (r, c, extra, alongRows, dt, la, lb, seed) => {
      const d = alongRows ? 0 : 1;
      using a = makeInput([r, c], la, seed, dt, device);
      using b = makeInput(alongRows ? [extra, c] : [r, extra], lb, seed + 1, dt, device);
      using j = cat(a, b, d);
      assertEquals(j.shape, alongRows ? [r + extra, c] : [r, c + extra]);
      assertEquals(j.toArray(), referenceCat(a.toArray(), b.toArray(), d));
    }),
    { numRuns: 40 },
  );
}

testOnDevices("cat joins along dimension 0 or 1 (sizes, layouts, dtypes)", matchesReference);

testOnDevices("cat joins int32 tensors and 3-D tensors along the last dimension (dim -1)", (device) => {
  using a = ints([1, 2, 3, 4], [2, 2], device), b = ints([5, 6], [2, 1], device);
  using j = cat(a, b, -1);
  assertEquals(j.dtype, "int32");
  assertEquals(j.toArray(), [[1, 2, 5], [3, 4, 6]]);
  using x = Tensor.randn([2, 3, 4], { dtype: "float64", seed: 1, device }), y = Tensor.randn([2, 3, 1], { dtype: "float64", seed: 2, device });
  using z = cat(x, y, 2);
  assertEquals(z.shape, [2, 3, 5]);
  assertEquals(z.toArray(), referenceCat(x.toArray(), y.toArray(), 2));
  assertEquals([...values(z)].length, 30);
});

testOnDevices("cat refuses mismatched sizes, a bad dim and mixed float and int32 by name", (device) => {
  using a = Tensor.zeros([2, 3], { device }), b = Tensor.zeros([3, 2], { device });
  assertThrowsLLTM(() => cat(a, b, 0), "SHAPE_MISMATCH", /^cat: 'b' has shape \[3, 2\] but 'a' has \[2, 3\]; all but dimension 0 must agree/);
  assertThrowsLLTM(() => cat(a, a, 2), "INVALID_ARGUMENT", /^cat: 'dim' must be an integer from -2 to 1, got 2/);
  using i = ints([1, 2, 3], [1, 3], device);
  assertThrowsLLTM(() => cat(a, i), "INVALID_DTYPE", /^cat: 'b' has dtype int32 but 'a' has dtype float32/);
});
