/**
 * crossEntropy and crossEntropyBackward (the CROSS_ENTROPY ops of
 * csrc/lltm_ops.def): each reduction and ignoreIndex against a float64
 * reference over sizes, layouts and dtypes; the gradient against central
 * differences in float64; over many blocks of rows (CUDA's) and the same
 * bits call after call; rows all ignored; stable at logits of 1e4 (the
 * row's maximum subtracted); a target out of range refused by position,
 * nothing written.
 */
import fc from "fast-check";

import { crossEntropy, crossEntropyBackward, type DeviceLike, type DType, type Reduction, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM } from "./harness.ts";
import { type Layout, layout, makeInput, smallSize } from "./helpers.ts";
import { centralDifferences, ints, maxRelative, randomInts, testOnDevices, values } from "./op_helpers.ts";

const IGNORE = -100;

/** Per-row losses (0 where ignored) and the reduced loss, in float64. */
function referenceLoss(x: Float64Array, V: number, targets: readonly number[], reduction: Reduction): Float64Array {
  const rows = targets.map((t, n) => {
    if (t === IGNORE) return 0;
    const row = x.subarray(n * V, (n + 1) * V);
    const max = Math.max(...row);
    const lse = Math.log(row.reduce((s, v) => s + Math.exp(v - max), 0)) + max;
    return lse - row[t]!;
  });
  if (reduction === "none") return Float64Array.from(rows);
  const sum = rows.reduce((a, b) => a + b, 0);
  const counted = targets.filter((t) => t !== IGNORE).length;
  return Float64Array.of(reduction === "sum" ? sum : sum / counted);
}

const reductions = fc.constantFrom<Reduction>("none", "mean", "sum");
const dtypes = fc.constantFrom<DType>("float32", "float64");
const tolerances: Record<string, number> = { float32: 2e-5, float64: 1e-12 };

/** crossEntropy and its backward on [N, V] logits of layout lx against the float64 reference. */
function checkAgainstReference(device: DeviceLike, N: number, V: number, dt: DType, lx: Layout, reduction: Reduction, seed: number): void {
  using logits = makeInput([N, V], lx, seed, dt, device, 3);
  // Every third row ignored, but never all of them.
  const targets = randomInts(N, V, seed).map((t, n) => (n % 3 === 2 ? IGNORE : t));
  using t = ints(targets, undefined, device);
  using loss = crossEntropy(logits, t, { reduction });
  assertEquals(loss.shape, reduction === "none" ? [N] : [1]);
  const x = values(logits);
  const err = maxRelative(values(loss), referenceLoss(x, V, targets, reduction));
  assert(err <= tolerances[dt]!, `${dt} ${reduction} ${N}x${V}: ${err}`);
  using g = reduction === "none" ? makeInput([N], "contiguous", seed + 1, dt, device) : Tensor.full([1], 0.75, { dtype: dt, device });
  using d = crossEntropyBackward(g, logits, t, { reduction });
  // The reference gradient: (softmax - onehot) times the row's gradient.
  const gv = values(g);
  const counted = targets.filter((v) => v !== IGNORE).length;
  const expected = new Float64Array(N * V);
  targets.forEach((target, n) => {
    if (target === IGNORE) return;
    const row = x.subarray(n * V, (n + 1) * V);
    const max = Math.max(...row);
    const sum = row.reduce((s, v) => s + Math.exp(v - max), 0);
    const scale = reduction === "none" ? gv[n]! : reduction === "mean" ? gv[0]! / counted : gv[0]!;
    for (let v = 0; v < V; v++) expected[n * V + v] = (Math.exp(row[v]! - max) / sum - (v === target ? 1 : 0)) * scale;
  });
  const dErr = maxRelative(values(d), expected);
  assert(dErr <= tolerances[dt]!, `${dt} ${reduction} d_logits ${N}x${V}: ${dErr}`);
}

function matchesReference(device: DeviceLike): void {
  fc.assert(
    fc.property(smallSize, smallSize, dtypes, layout, reductions, fc.nat(1 << 20), (N, V, dt, lx, reduction, seed) =>
      checkAgainstReference(device, N, V, dt, lx, reduction, seed)),
    { numRuns: 30 },
  );
}

testOnDevices("crossEntropy and its backward match the float64 reference (sizes, layouts, dtypes, reductions, ignoreIndex)", matchesReference);

// Enough rows that the CPU splits them between threads (2048 x 65: the main job's logits on the CPU, T·B x V),
// contiguous (float32 rows of whole vectors and a tail, the vector path) and strided.
testOnDevices("crossEntropy and its backward match the float64 reference with their rows split between threads", (device) => {
  for (const dt of ["float32", "float64"] as const) {
    for (const lx of ["contiguous", "strided"] as const) {
      for (const reduction of ["none", "mean", "sum"] as const) checkAgainstReference(device, 2048, 65, dt, lx, reduction, 5);
    }
  }
});

// Rows over many of CUDA's blocks of 8 and not a whole number of them (6403: 801 blocks, the last one short; 40009 x 3:
// beyond a launch's 4096 blocks, so that a warp takes several rows), three calls in turn at each size: each call's
// mean or sum must come from its own blocks' partials, whatever the previous call left in the scratch it reuses.
testOnDevices("crossEntropy and its backward match the float64 reference over many blocks of rows", (device) => {
  for (const reduction of ["none", "mean", "sum"] as const) {
    for (const seed of [1, 2, 3]) checkAgainstReference(device, 6403, 65, "float32", "contiguous", reduction, seed);
    for (const seed of [4, 5, 6]) checkAgainstReference(device, 40009, 3, "float64", "strided", reduction, seed);
  }
});

testOnDevices("crossEntropy's mean and sum are the same bits on every call", (device) => {
  const N = 6403, V = 65;
  using logits = makeInput([N, V], "contiguous", 7, "float64", device, 3);
  using t = ints(randomInts(N, V, 7).map((v, n) => (n % 5 === 0 ? IGNORE : v)), undefined, device);
  for (const reduction of ["mean", "sum"] as const) {
    using first = crossEntropy(logits, t, { reduction });
    const want = values(first)[0]!;
    for (let i = 0; i < 20; i++) {
      using again = crossEntropy(logits, t, { reduction });
      const got = values(again)[0]!;
      assert(Object.is(got, want), `${reduction} call ${i + 1}: ${got} vs ${want}`);
    }
  }
});

// Over rows spread across blocks (20: 3 of CUDA's blocks), none of them counted.
testOnDevices("crossEntropy over rows all ignored: the mean is NaN (0 / 0), the sum 0, the gradient 0", (device) => {
  const N = 20, V = 5;
  using x = makeInput([N, V], "contiguous", 3, "float32", device);
  using t = ints(new Array<number>(N).fill(IGNORE), undefined, device);
  using mean = crossEntropy(x, t, { reduction: "mean" });
  assert(Number.isNaN(values(mean)[0]), `mean ${values(mean)[0]}`);
  using sum = crossEntropy(x, t, { reduction: "sum" });
  assertEquals(values(sum)[0], 0);
  using none = crossEntropy(x, t, { reduction: "none" });
  assert(values(none).every((v) => v === 0), "losses");
  for (const reduction of ["mean", "sum"] as const) {
    using g = Tensor.ones([1], { device });
    using d = crossEntropyBackward(g, x, t, { reduction });
    assert(values(d).every((v) => v === 0), `${reduction} d_logits`);
  }
});

testOnDevices("crossEntropyBackward matches central differences in float64, each reduction", (device) => {
  const N = 3, V = 4, targets = [2, IGNORE, 0];
  using base = Tensor.randn([N, V], { dtype: "float64", seed: 9 });
  const x = values(base);
  using t = ints(targets, undefined, device);
  for (const reduction of ["none", "mean", "sum"] as const) {
    const gv = reduction === "none" ? Float64Array.of(0.5, -2, 1.5) : Float64Array.of(1.25);
    using g = Tensor.fromTypedArray(gv, undefined, { device });
    const loss = (v: Float64Array) => {
      using xt = Tensor.fromTypedArray(v, [N, V], { device });
      using l = crossEntropy(xt, t, { reduction });
      return values(l).reduce((s, e, i) => s + e * gv[i]!, 0);
    };
    using xt = Tensor.fromTypedArray(x, [N, V], { device });
    using d = crossEntropyBackward(g, xt, t, { reduction });
    const err = maxRelative(values(d), centralDifferences(loss, x));
    assert(err <= 1e-8, `${reduction}: ${err}`);
  }
});

testOnDevices("crossEntropy is stable at large logits and takes leading dimensions", (device) => {
  using x = Tensor.fromArray([[[1e4, 0, -1e4], [-1e4, 1e4, 1e4]]], { device });
  using t = ints([0, 1], [1, 2], device);
  using none = crossEntropy(x, t, { reduction: "none" });
  assertEquals(none.shape, [1, 2]);
  const v = values(none);
  assert(v[0] === 0 && Math.abs(v[1]! - Math.LN2) < 1e-6, `losses ${v}`);
  using d = crossEntropyBackward(Tensor.full([1], 1, { device }), x, t, { reduction: "sum" });
  assert(values(d).every(Number.isFinite), "finite gradient");
});

testOnDevices("crossEntropy refuses bad targets and options by name before anything is written", (device) => {
  using x = Tensor.zeros([3, 4], { device });
  using bad = ints([0, 4, 1], undefined, device);
  assertThrowsLLTM(() => crossEntropy(x, bad), "INVALID_ARGUMENT", /^crossEntropy: 'targets' holds 4 at \[1\]; expected an index from 0 to 3 or ignore_index \(-100\)$/);
  using d = Tensor.full([3, 4], 9, { device });
  using g = Tensor.ones([1], { device });
  assertThrowsLLTM(() => crossEntropyBackward(g, x, bad), "INVALID_ARGUMENT", /^crossEntropyBackward: 'targets' holds 4 at \[1\]/);
  using t = ints([0, 1, 2], undefined, device);
  using ft = Tensor.zeros([3], { device });
  assertThrowsLLTM(() => crossEntropy(x, ft), "INVALID_DTYPE", /^crossEntropy: 'targets' has dtype float32; expected int32/);
  assertThrowsLLTM(() => crossEntropy(x, t, { reduction: "max" as Reduction }), "INVALID_ARGUMENT", /^crossEntropy: 'reduction' must be/);
  assertThrowsLLTM(() => crossEntropy(x, t, { ignoreIndex: 0.5 }), "INVALID_ARGUMENT", /^crossEntropy: 'ignoreIndex'/);
  using short = ints([0, 1], undefined, device);
  assertThrowsLLTM(() => crossEntropy(x, short), "SHAPE_MISMATCH", /^crossEntropy: 'targets' must have shape \[3\]/);
  using g3 = Tensor.ones([2], { device });
  assertThrowsLLTM(() => crossEntropyBackward(g3, x, t, { reduction: "none" }), "SHAPE_MISMATCH", /^crossEntropyBackward: 'gradLoss' must have shape \[3\]/);
  assertEquals([...values(d)].every((v) => v === 9), true);
});
