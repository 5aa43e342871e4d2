/**
 * linear and linearBackward (the LINEAR ops of csrc/lltm_ops.def): against
 * the float64 reference over random sizes, layouts and dtypes, with leading
 * dimensions as torch.nn.functional.linear takes them, gradients against
 * central differences, accumulation into given tensors, the gradients left
 * out, and bad input refused by name before anything is written.
 */
import fc from "fast-check";

import { type DType, linear, linearBackward, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";
import { layout, makeInput, referenceError, tolerance } from "./helpers.ts";
import { referenceLinear, referenceLinearBackward } from "./linear_reference.ts";

const size = fc.integer({ min: 1, max: 40 });
const dtypes = fc.constantFrom<DType>("float32", "float64");

test("linear and linearBackward match the float64 reference (sizes, layouts, dtypes, with and without bias)", () => {
  fc.assert(
    fc.property(size, size, size, dtypes, layout, layout, fc.boolean(), fc.integer({ min: 0, max: 1 << 20 }), (N, K, M, dt, lx, lw, withBias, s) => {
      using x = makeInput([N, K], lx, s, dt);
      using w = makeInput([M, K], lw, s + 1, dt, "cpu", 1 / Math.sqrt(K));
      using b = makeInput([M], "contiguous", s + 2, dt);
      const bias = withBias ? b : undefined;
      using y = linear(x, w, bias);
      assertEquals(y.shape, [N, M]);
      const tol = tolerance[dt];
      const err = referenceError(y.toTypedArray(), referenceLinear(x, w, bias));
      assert(err <= tol, `${dt} y ${N}x${K}x${M}: ${err}`);
      using gy = makeInput([N, M], lx, s + 3, dt);
      using g = linearBackward(gy, x, w);
      const ref = referenceLinearBackward(gy, x, w);
      for (const name of ["dX", "dWeight", "dBias"] as const) {
        const e = referenceError(g[name]!.toTypedArray(), ref[name]);
        assert(e <= tol, `${dt} ${name} ${N}x${K}x${M}: ${e}`);
      }
    }),
    { numRuns: 40 },
  );
});

test("linear takes leading dimensions (and a 1-D x), as torch.nn.functional.linear", () => {
  using x = Tensor.randn([2, 3, 4, 5], { dtype: "float64", seed: 1 });
  using w = Tensor.randn([6, 5], { dtype: "float64", seed: 2 });
  using b = Tensor.randn([6], { dtype: "float64", seed: 3 });
  using y = linear(x, w, b);
  assertEquals(y.shape, [2, 3, 4, 6]);
  assert(referenceError(y.toTypedArray(), referenceLinear(x, w, b)) <= 1e-12, "values");
  using gy = Tensor.randn([2, 3, 4, 6], { dtype: "float64", seed: 4 });
  using g = linearBackward(gy, x, w);
  assertEquals(g.dX!.shape, [2, 3, 4, 5]);
  const ref = referenceLinearBackward(gy, x, w);
  assert(referenceError(g.dX!.toTypedArray(), ref.dX) <= 1e-12, "dX");
  assert(referenceError(g.dWeight!.toTypedArray(), ref.dWeight) <= 1e-12, "dWeight");
  using v = Tensor.randn([5], { dtype: "float64", seed: 5 });
  using yv = linear(v, w);
  assertEquals(yv.shape, [6]);
  assert(referenceError(yv.toTypedArray(), referenceLinear(v, w)) <= 1e-12, "1-D x");
});

test("linearBackward's gradients match central differences of linear in float64", () => {
  const N = 3, K = 4, M = 2, h = 1e-6;
  const values = (shape: number[], seed: number) => {
    using t = Tensor.randn(shape, { dtype: "float64", seed });
    return Float64Array.from(t.toTypedArray());
  };
  const x = values([N, K], 7), w = values([M, K], 8);
  const b = Float64Array.from([0.3, -0.7]);
  const gy = Float64Array.from([0.5, -1, 2, 0.25, -0.5, 1.5]);
  const loss = () => {
    using xt = Tensor.fromTypedArray(x, [N, K]), wt = Tensor.fromTypedArray(w, [M, K]), bt = Tensor.fromTypedArray(b);
    using y = linear(xt, wt, bt);
    let sum = 0;
    y.toTypedArray().forEach((v, i) => (sum += v * gy[i]!));
    return sum;
  };
  using xt = Tensor.fromTypedArray(x, [N, K]), wt = Tensor.fromTypedArray(w, [M, K]), gt = Tensor.fromTypedArray(gy, [N, M]);
  using g = linearBackward(gt, xt, wt);
  for (const [name, values, analytic] of [["x", x, g.dX!], ["weight", w, g.dWeight!], ["bias", b, g.dBias!]] as const) {
    const a = analytic.toTypedArray();
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      values[i] = v + h;
      const up = loss();
      values[i] = v - h;
      const down = loss();
      values[i] = v;
      const numeric = (up - down) / (2 * h);
      assert(Math.abs(numeric - a[i]!) <= 1e-7 * Math.max(1, Math.abs(numeric)), `d${name}[${i}]: ${a[i]} vs ${numeric}`);
    }
  }
});

test("linearBackward computes only what is asked for, and adds into given gradients", () => {
  const o = { dtype: "float64" as const };
  using x = Tensor.randn([4, 3], { ...o, seed: 1 });
  using w = Tensor.randn([2, 3], { ...o, seed: 2 });
  using gy = Tensor.randn([4, 2], { ...o, seed: 3 });
  const ref = referenceLinearBackward(gy, x, w);
  using only = linearBackward(gy, x, w, { needX: false, needBias: false });
  assert(only.dX === undefined && only.dBias === undefined && only.dWeight !== undefined, "only dWeight");
  using dW = Tensor.ones([2, 3], o);
  using dB = Tensor.full([2], 2, o);
  using acc = linearBackward(gy, x, w, { dWeight: dW, dBias: dB });
  assert(acc.dWeight === undefined && acc.dBias === undefined && acc.dX !== undefined, "dWeight and dBias go into the targets");
  assert(referenceError(dW.toTypedArray(), ref.dWeight.map((v) => v + 1)) <= 1e-12, "dWeight added to");
  assert(referenceError(dB.toTypedArray(), ref.dBias.map((v) => v + 2)) <= 1e-12, "dBias added to");
  // Adding into dWeight alone: the bias' gradient made here starts at zero.
  using dW2 = Tensor.zeros([2, 3], o);
  using half = linearBackward(gy, x, w, { dWeight: dW2 });
  assert(referenceError(half.dBias!.toTypedArray(), ref.dBias) <= 1e-12, "a fresh dBias beside an accumulated dWeight");
  assert(referenceError(dW2.toTypedArray(), ref.dWeight) <= 1e-12, "dWeight into zeros");
});

test("linear and linearBackward refuse bad input by name, writing nothing", () => {
  using x = Tensor.randn([4, 3], { seed: 1 });
  using w = Tensor.randn([2, 5], { seed: 2 });
  assertThrowsLLTM(() => linear(x, w), "SHAPE_MISMATCH", /^linear: 'weight'/);
  using w2 = Tensor.randn([2, 3], { seed: 2 });
  using b = Tensor.zeros([3]);
  assertThrowsLLTM(() => linear(x, w2, b), "SHAPE_MISMATCH", /^linear: 'bias'/);
  const gone = Tensor.zeros([2, 3]);
  gone.dispose();
  assertThrowsLLTM(() => linear(x, gone), "DISPOSED", /linear: 'weight' has been disposed/);
  using gy = Tensor.zeros([4, 3]);
  assertThrowsLLTM(() => linearBackward(gy, x, w2), "SHAPE_MISMATCH", /^linearBackward: '(gradY|weight|x)'/);
  using dW = Tensor.full([2, 4], 9);
  using gy2 = Tensor.zeros([4, 2]);
  assertThrowsLLTM(() => linearBackward(gy2, x, w2, { dWeight: dW }), "SHAPE_MISMATCH", /^linearBackward: 'dWeight'/);
  assert(dW.toTypedArray().every((v) => v === 9), "nothing written");
});
