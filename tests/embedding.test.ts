/**
 * embedding and embeddingBackward (the EMBEDDING ops of csrc/lltm_ops.def):
 * the gather against a float64 reference over sizes, layouts and dtypes;
 * the scatter-add of the backward (repeated ids add up, accumulation into a
 * given gradient) against the reference and against central differences;
 * an id out of range refused, naming its position, with nothing written.
 */
import fc from "fast-check";

import { type DeviceLike, type DType, embedding, embeddingBackward, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM } from "./harness.ts";
import { layout, makeInput, referenceError, smallSize, tolerance } from "./helpers.ts";
import { centralDifferences, ints, maxRelative, randomInts, testOnDevices, values } from "./op_helpers.ts";

function referenceGather(w: Float64Array, D: number, ids: readonly number[]): Float64Array {
  const y = new Float64Array(ids.length * D);
  ids.forEach((id, n) => y.set(w.subarray(id * D, (id + 1) * D), n * D));
  return y;
}

function referenceScatter(g: Float64Array, D: number, ids: readonly number[], V: number): Float64Array {
  const dw = new Float64Array(V * D);
  ids.forEach((id, n) => {
    for (let d = 0; d < D; d++) dw[id * D + d] = dw[id * D + d]! + g[n * D + d]!;
  });
  return dw;
}

const dtypes = fc.constantFrom<DType>("float32", "float64", "bfloat16");

function matchesReference(device: DeviceLike): void {
  fc.assert(
    fc.property(smallSize, smallSize, smallSize, dtypes, layout, fc.nat(1 << 20), (N, V, D, dt, lw, seed) => {
      using w = makeInput([V, D], lw, seed, dt, device);
      const idList = randomInts(N, V, seed);
      using ids = ints(idList, undefined, device);
      using y = embedding(w, ids);
      assertEquals(y.shape, [N, D]);
      assertEquals(y.dtype, dt);
      // A gather copies: exact in every dtype.
      assertEquals([...values(y)], [...referenceGather(values(w), D, idList)]);
      using g = makeInput([N, D], lw, seed + 1, dt, device);
      using dw = embeddingBackward(g, ids, V);
      const err = referenceError(values(dw), referenceScatter(values(g), D, idList, V));
      assert(err <= tolerance[dt], `${dt} ${N}x${V}x${D}: ${err}`);
    }),
    { numRuns: 25 },
  );
}

testOnDevices("embedding gathers rows and embeddingBackward adds them back (sizes, layouts, dtypes)", matchesReference);

testOnDevices("embedding takes ids of any shape; the backward accumulates into a given gradient", (device) => {
  using w = Tensor.randn([5, 3], { dtype: "float64", seed: 1, device });
  using ids = ints([4, 0, 4, 2, 1, 4], [2, 3], device);
  using y = embedding(w, ids);
  assertEquals(y.shape, [2, 3, 3]);
  using g = Tensor.randn([2, 3, 3], { dtype: "float64", seed: 2, device });
  using acc = Tensor.ones([5, 3], { dtype: "float64", device });
  using same = embeddingBackward(g, ids, 5, { dWeight: acc });
  const expected = referenceScatter(values(g), 3, [4, 0, 4, 2, 1, 4], 5).map((v) => v + 1);
  assert(referenceError(values(acc), expected) <= 1e-12, "accumulated");
});

testOnDevices("embeddingBackward matches central differences of embedding in float64", (device) => {
  const V = 4, D = 3, idList = [3, 1, 3, 0];
  using wt = Tensor.randn([V, D], { dtype: "float64", seed: 3 });
  const w = values(wt);
  using gt = Tensor.randn([idList.length, D], { dtype: "float64", seed: 4, device });
  const g = values(gt);
  using ids = ints(idList, undefined, device);
  const loss = (x: Float64Array) => {
    using xt = Tensor.fromTypedArray(x, [V, D], { device });
    using y = embedding(xt, ids);
    return values(y).reduce((s, v, i) => s + v * g[i]!, 0);
  };
  using dw = embeddingBackward(gt, ids, V);
  const err = maxRelative(values(dw), centralDifferences(loss, w));
  assert(err <= 1e-8, `central differences: ${err}`);
});

testOnDevices("an id out of range is refused by position before anything is written", (device) => {
  using w = Tensor.randn([3, 2], { seed: 5, device });
  for (const bad of [3, -1, 2147483647]) {
    using ids = ints([0, 2, bad, 1], undefined, device);
    assertThrowsLLTM(() => embedding(w, ids), "INVALID_ARGUMENT", new RegExp(`^embedding: 'ids' holds ${bad} at \\[2\\]; expected an index from 0 to 2$`));
    using g = Tensor.ones([4, 2], { device });
    using into = Tensor.full([3, 2], 7, { device });
    assertThrowsLLTM(() => embeddingBackward(g, ids, 3, { dWeight: into }), "INVALID_ARGUMENT", /^embeddingBackward: 'ids' holds .* at \[2\]/);
    assertEquals([...values(into)], [7, 7, 7, 7, 7, 7]);
  }
  using ids = ints([0], undefined, device);
  using g = Tensor.ones([1, 2], { device });
  assertThrowsLLTM(() => embeddingBackward(g, ids, 0), "INVALID_ARGUMENT", /^embeddingBackward: 'numEmbeddings' must be a positive integer/);
  using other = Tensor.ones([2, 5], { device });
  assertThrowsLLTM(() => embeddingBackward(other, ids, 3, { dWeight: w }), "SHAPE_MISMATCH", /^embeddingBackward: 'gradY'/);
});
