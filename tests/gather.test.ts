/**
 * gather and gatherBackward (the GATHER ops of csrc/lltm_ops.def), as
 * torch.gather: against a reference over ranks, dims, sizes, layouts and
 * dtypes (float and int32); the backward's scatter-add (repeated indices add
 * up, accumulation into a given gradient) against the reference and the
 * tape's gradient against central differences in float64; bad input refused
 * by name, an index out of range by position, with nothing written.
 */
import fc from "fast-check";

import { type DeviceLike, type DType, gather, gatherBackward, mul, sum, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM } from "./harness.ts";
import { layout, makeInput, referenceError, relayout, tolerance } from "./helpers.ts";
import { centralDifferences, ints, maxRelative, randomInts, testOnDevices, values } from "./op_helpers.ts";

const product = (sizes: readonly number[]) => sizes.reduce((a, b) => a * b, 1);

/** out[o, q, i] = x[o, index[o, q, i], i] over row-major values, x's shape split at dim as [O, P, I]. */
function referenceGather(x: ArrayLike<number>, shape: readonly number[], dim: number, index: readonly number[], Q: number): Float64Array {
  const P = shape[dim]!, I = product(shape.slice(dim + 1)), O = product(shape.slice(0, dim));
  const out = new Float64Array(O * Q * I);
  for (let o = 0; o < O; o++) {
    for (let q = 0; q < Q; q++) for (let i = 0; i < I; i++) out[(o * Q + q) * I + i] = x[(o * P + index[(o * Q + q) * I + i]!) * I + i]!;
  }
  return out;
}

function referenceScatter(g: ArrayLike<number>, shape: readonly number[], dim: number, index: readonly number[], Q: number): Float64Array {
  const P = shape[dim]!, I = product(shape.slice(dim + 1)), O = product(shape.slice(0, dim));
  const dx = new Float64Array(O * P * I);
  for (let o = 0; o < O; o++) {
    for (let q = 0; q < Q; q++) {
      for (let i = 0; i < I; i++) {
        const at = (o * P + index[(o * Q + q) * I + i]!) * I + i;
        dx[at] = dx[at]! + g[(o * Q + q) * I + i]!;
      }
    }
  }
  return dx;
}

const size = fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 7 }));
const shapes = fc.array(size, { minLength: 1, maxLength: 3 });

function matchesReference(device: DeviceLike): void {
  fc.assert(
    fc.property(
      shapes, fc.nat(2), size, fc.constantFrom<DType>("float32", "float64", "bfloat16", "int32"), layout, fc.nat(1 << 20),
      (shape, dimPick, Q, dt, lx, seed) => {
        const dim = dimPick % shape.length;
        const indexShape = shape.map((n, i) => (i === dim ? Q : n));
        const idList = randomInts(product(indexShape), shape[dim]!, seed);
        using index = ints(idList, indexShape, device);
        using x = dt === "int32"
          ? ints(randomInts(product(shape), 1000, seed + 1), shape, device)
          : shape.length === 2 ? makeInput(shape, lx, seed, dt, device) : Tensor.randn(shape, { dtype: dt, seed, device });
        using out = gather(x, dim - shape.length * (seed % 2), index); // a negative dim half the time
        assertEquals(out.shape, indexShape);
        assertEquals(out.dtype, dt);
        // A gather copies: exact in every dtype.
        assertEquals([...values(out)], [...referenceGather(values(x), shape, dim, idList, Q)]);
        if (dt === "int32") return;
        using g = Tensor.randn(indexShape, { dtype: dt, seed: seed + 2, device });
        using dx = gatherBackward(g, dim, index, shape);
        assertEquals(dx.shape, shape);
        const err = referenceError(values(dx), referenceScatter(values(g), shape, dim, idList, Q));
        assert(err <= tolerance[dt], `${dt} ${shape} dim ${dim} Q ${Q}: ${err}`);
      },
    ),
    { numRuns: 40 },
  );
}

testOnDevices("gather takes elements along a dimension and gatherBackward adds them back (ranks, sizes, layouts, dtypes)", matchesReference);

testOnDevices("gather picks each row's target as torch.gather(logits, 1, targets); the backward accumulates into a given gradient", (device) => {
  using logits = Tensor.fromTypedArray(Float64Array.from([0, 1, 2, 10, 11, 12]), [2, 3], { device });
  using targets = ints([2, 0], [2, 1], device);
  using picked = gather(logits, 1, targets);
  assertEquals(picked.toArray(), [[2], [10]]);
  // Along dimension 0 of a transposed layout, rows named twice.
  using t = relayout(logits, "transposed");
  using rows = ints([1, 1, 0, 1, 0, 0], [2, 3], device);
  using down = gather(t, 0, rows);
  assertEquals(down.toArray(), [[10, 11, 2], [10, 1, 2]]);
  using twice = ints([1, 1, 0, 1], [2, 2], device);
  using g = Tensor.ones([2, 2], { dtype: "float64", device });
  using acc = Tensor.full([2, 3], 0.5, { dtype: "float64", device });
  using same = gatherBackward(g, 1, twice, [2, 3], { dInput: acc });
  assertEquals(same.toArray(), acc.toArray());
  assertEquals(acc.toArray(), [[0.5, 2.5, 0.5], [1.5, 1.5, 0.5]]);
});

testOnDevices("gather's gradient on the tape matches central differences in float64", (device) => {
  const shape = [3, 4, 2], dim = 1, indexShape = [3, 5, 2];
  const idList = randomInts(product(indexShape), shape[dim]!, 7);
  using index = ints(idList, indexShape, device);
  using xt = Tensor.randn(shape, { dtype: "float64", seed: 8 });
  using gt = Tensor.randn(indexShape, { dtype: "float64", seed: 9, device });
  const g = values(gt);
  using x = xt.to(device).requiresGrad_();
  using out = gather(x, dim, index);
  using weighted = sum(mul(out, gt));
  weighted.backward();
  const loss = (v: Float64Array) => {
    using t = Tensor.fromTypedArray(v, shape, { device });
    using y = gather(t, dim, index);
    return values(y).reduce((s, e, i) => s + e * g[i]!, 0);
  };
  const err = maxRelative(values(x.grad!), centralDifferences(loss, values(xt)));
  assert(err <= 1e-8, `central differences: ${err}`);
});

testOnDevices("gather refuses a bad index by position and bad arguments by name, writing nothing", (device) => {
  using x = Tensor.randn([2, 3], { seed: 5, device });
  for (const bad of [3, -1]) {
    using index = ints([0, 2, bad, 1], [2, 2], device);
    assertThrowsLLTM(() => gather(x, 1, index), "INVALID_ARGUMENT", new RegExp(`^gather: 'index' holds ${bad} at \\[2\\]; expected an index from 0 to 2$`));
    using g = Tensor.ones([2, 2], { device });
    using into = Tensor.full([2, 3], 7, { device });
    assertThrowsLLTM(() => gatherBackward(g, 1, index, [2, 3], { dInput: into }), "INVALID_ARGUMENT", /^gatherBackward: 'index' holds .* at \[2\]/);
    assertEquals([...values(into)], [7, 7, 7, 7, 7, 7]);
  }
  using index = ints([0, 1], [2, 1], device);
  assertThrowsLLTM(() => gather(x, 2, index), "INVALID_ARGUMENT", /^gather: 'dim' must be an integer from -2 to 1, got 2/);
  using wide = ints([0, 1, 0], [3, 1], device);
  assertThrowsLLTM(() => gather(x, 1, wide), "SHAPE_MISMATCH", /^gather: 'index' has shape \[3, 1\] but 'input' has \[2, 3\]/);
  using floats = Tensor.zeros([2, 1], { device });
  assertThrowsLLTM(() => gather(x, 1, floats), "INVALID_DTYPE", /^gather: 'index' must be int32, got float32/);
  using g = Tensor.ones([2, 2], { device });
  assertThrowsLLTM(() => gatherBackward(g, 1, index, [2, 3]), "SHAPE_MISMATCH", /^gatherBackward: 'gradOut' has shape \[2, 2\]; it must be index's, \[2, 1\]/);
  assertThrowsLLTM(() => gatherBackward(g, 1, index, [2, 0]), "INVALID_ARGUMENT", /^gatherBackward: 'inputShape' must be an array of positive integers/);
});
