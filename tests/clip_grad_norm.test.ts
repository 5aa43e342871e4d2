/**
 * clipGradNorm_ (the SUM_SQUARES and SCALE_BY_NORM ops of csrc/lltm_ops.def):
 * the joint norm and the scaled gradients against float64 as
 * torch.nn.utils.clip_grad_norm_ computes them, gradients left alone under
 * the limit, mixed float32 and half gradients, bad input by name.
 */
import fc from "fast-check";

import { clipGradNorm_, type DeviceLike, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM } from "./harness.ts";
import { ints, maxRelative, testOnDevices, values } from "./op_helpers.ts";

function matchesReference(device: DeviceLike): void {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }), fc.double({ min: 0, max: 20, noNaN: true }), fc.nat(1 << 20), (sizes, maxNorm, seed) => {
      const grads = sizes.map((n, k) => Tensor.randn([n], { dtype: "float64", seed: seed + k, device }));
      try {
        const before = grads.map(values);
        const norm = Math.sqrt(before.reduce((s, g) => s + g.reduce((a, v) => a + v * v, 0), 0));
        const factor = Math.min(1, maxNorm / (norm + 1e-6));
        using total = clipGradNorm_(grads, maxNorm);
        assertEquals(total.shape, [1]);
        assert(Math.abs(values(total)[0]! - norm) <= 1e-12 * norm, `norm ${values(total)[0]} vs ${norm}`);
        grads.forEach((g, k) => assert(maxRelative(values(g), before[k]!.map((v) => v * factor)) <= 1e-14, `gradient ${k}`));
      } finally {
        for (const g of grads) g.dispose();
      }
    }),
    { numRuns: 30 },
  );
}

testOnDevices("clipGradNorm_ scales every gradient by min(1, maxNorm / (norm + 1e-6)) and returns the norm", matchesReference);

testOnDevices("clipGradNorm_ takes float32 and half gradients together, computing in float32", (device) => {
  using a = Tensor.fromArray([3, 0], { device }), b = Tensor.fromArray([[4]], { dtype: "bfloat16", device });
  using n = clipGradNorm_([a, b], 1);
  assertEquals(n.dtype, "float32");
  assertEquals([...values(n)], [5]);
  assert(maxRelative(values(a), [0.6, 0]) <= 1e-6, "a scaled");
  assert(Math.abs(values(b)[0]! - 0.8) <= 2 ** -8, "b scaled, rounded to bfloat16");
});

testOnDevices("clipGradNorm_ refuses bad input by name before scaling anything", (device) => {
  using a = Tensor.fromArray([3, 4], { device }), d = Tensor.fromArray([1], { dtype: "float64", device });
  using i = ints([1], undefined, device);
  assertThrowsLLTM(() => clipGradNorm_([], 1), "INVALID_ARGUMENT", /^clipGradNorm_: 'parameters' must be a non-empty array/);
  assertThrowsLLTM(() => clipGradNorm_([a], -1), "INVALID_ARGUMENT", /^clipGradNorm_: 'maxNorm' must be a finite number >= 0/);
  assertThrowsLLTM(() => clipGradNorm_([a, d], 1), "INVALID_DTYPE", /^clipGradNorm_: 'parameters\[1\]' has dtype float64 but 'parameters\[0\]' has float32/);
  assertThrowsLLTM(() => clipGradNorm_([i], 1), "INVALID_DTYPE", /^clipGradNorm_: 'parameters\[0\]' has dtype int32/);
  assertEquals([...values(a)], [3, 4]);
});
