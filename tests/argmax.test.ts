/** argmax over the last dimension (the ARGMAX op of csrc/lltm_ops.def): int32 indices, first of ties, NaN as largest. */
import fc from "fast-check";

import { argmax, type DeviceLike, type DType, Tensor } from "../ts/index.ts";
import { assertEquals, assertThrowsLLTM } from "./harness.ts";
import { layout, makeInput, smallSize } from "./helpers.ts";
import { ints, testOnDevices, values } from "./op_helpers.ts";

function matchesReference(device: DeviceLike): void {
  fc.assert(
    fc.property(smallSize, smallSize, fc.constantFrom<DType>("float32", "float64", "bfloat16"), layout, fc.nat(1 << 20), (N, V, dt, lx, seed) => {
      using x = makeInput([N, V], lx, seed, dt, device);
      using i = argmax(x);
      assertEquals(i.dtype, "int32");
      assertEquals(i.shape, [N]);
      const v = values(x);
      const expected = Array.from({ length: N }, (_, n) => {
        let best = 0;
        for (let k = 1; k < V; k++) if (v[n * V + k]! > v[n * V + best]!) best = k;
        return best;
      });
      assertEquals([...i.toTypedArray()], expected);
    }),
    { numRuns: 40 },
  );
}

testOnDevices("argmax matches a reference (sizes, layouts, dtypes)", matchesReference);

testOnDevices("argmax takes the first of equal values, a NaN as largest, and keeps leading dimensions", (device) => {
  using x = Tensor.fromArray([[[1, 3, 3], [NaN, 5, NaN]], [[-1, -1, -1], [0, Infinity, 2]]], { device });
  using i = argmax(x);
  assertEquals(i.shape, [2, 2]);
  assertEquals(i.toArray(), [[1, 0], [0, 1]]);
  using ids = ints([1, 2], undefined, device);
  assertThrowsLLTM(() => argmax(ids), "INVALID_DTYPE", /^argmax: 'x' has dtype int32/);
});
