/** Tensor factories, views, copies and lifetime. */
import fc from "fast-check";

import { Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";

test("fromArray and toArray round-trip, in both dtypes", () => {
  for (const dtype of ["float32", "float64"] as const) {
    using t = Tensor.fromArray([[1, 2, 3], [4, 5, 6]], { dtype });
    assertEquals(t.shape, [2, 3]);
    assertEquals(t.dtype, dtype);
    assertEquals(t.toArray(), [[1, 2, 3], [4, 5, 6]]);
  }
});

test("zeros, ones and full fill every element", () => {
  using z = Tensor.zeros([2, 2]);
  using o = Tensor.ones([3], { dtype: "float64" });
  using f = Tensor.full([1, 2], 2.5);
  assertEquals(z.toArray(), [[0, 0], [0, 0]]);
  assertEquals(o.toArray(), [1, 1, 1]);
  assertEquals(f.toArray(), [[2.5, 2.5]]);
});

test("randn and rand are reproducible from their seed", () => {
  using a = Tensor.randn([4, 3], { seed: 7, dtype: "float64" });
  using b = Tensor.randn([4, 3], { seed: 7, dtype: "float64" });
  using c = Tensor.randn([4, 3], { seed: 8, dtype: "float64" });
  assertEquals(a.toArray(), b.toArray());
  assert(JSON.stringify(a.toArray()) !== JSON.stringify(c.toArray()), "different seeds give different values");
  using u = Tensor.rand([1000], { seed: 1, low: -2, high: 3 });
  const v = u.toTypedArray();
  assert(v.every((x) => x >= -2 && x < 3), "rand stays in [low, high)");
});

test("transpose, narrow, slice and expand view the right elements", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 0, max: 1000 }), (r, c, seed) => {
      using t = Tensor.randn([r, c], { seed, dtype: "float64" });
      const a = t.toArray() as number[][];
      using tt = t.transpose();
      assertEquals(tt.toArray(), a[0]!.map((_, j) => a.map((row) => row[j]!)));
      const start = seed % r, len = r - start;
      using n = t.narrow(0, start, len);
      assertEquals(n.toArray(), a.slice(start, start + len));
      using s = t.slice(1, 0, c, 2);
      assertEquals(s.toArray(), a.map((row) => row.filter((_, j) => j % 2 === 0)));
      using row = t.narrow(0, 0, 1);
      using e = row.expand([3, c]);
      assertEquals(e.strides[0], 0);
      assertEquals(e.toArray(), [a[0]!, a[0]!, a[0]!]);
    }),
    { numRuns: 30 },
  );
});

test("views share memory with their source", () => {
  using t = Tensor.zeros([2, 3]);
  using v = t.transpose();
  v.fill(4);
  assertEquals(t.toArray(), [[4, 4, 4], [4, 4, 4]]);
});

test("reshape views a contiguous tensor and copies a strided one", () => {
  using t = Tensor.fromArray([[1, 2, 3], [4, 5, 6]]);
  using r = t.reshape([3, 2]);
  assertEquals(r.toArray(), [[1, 2], [3, 4], [5, 6]]);
  using tt = t.transpose();
  assert(!tt.isContiguous(), "a transpose is not contiguous");
  using r2 = tt.reshape([6]);
  assertEquals(r2.toArray(), [1, 4, 2, 5, 3, 6]);
  assertThrowsLLTM(() => t.reshape([4]), "INVALID_ARGUMENT", /holds 4 elements but the tensor has 6/);
});

test("reshape views a strided tensor where its strides allow, as torch.reshape", () => {
  using h = Tensor.fromArray([[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]]);
  using column = h.narrow(2, 0, 1);
  using first = column.reshape([4]);
  assertEquals(first.strides, [3], "the [1, 4, 1] column read as [4] with the rows' stride");
  assertEquals(first.toArray(), [0, 3, 6, 9]);
  first.fill(-1);
  assertEquals(h.toArray(), [[[-1, 1, 2], [-1, 4, 5], [-1, 7, 8], [-1, 10, 11]]], "a view writes through");
  using t = Tensor.fromArray(Array.from({ length: 4 }, (_, i) => Array.from({ length: 6 }, (_, j) => 6 * i + j)));
  using cols = t.narrow(1, 1, 3);
  using split = cols.reshape([2, 2, 3]);
  assertEquals(split.strides, [12, 6, 1], "whole rows regrouped: a view");
  using flat = cols.reshape([12]);
  assertEquals(flat.strides, [1], "rows with gaps flattened: a copy");
  assertEquals(flat.toArray(), [1, 2, 3, 7, 8, 9, 13, 14, 15, 19, 20, 21]);
});

test("reshape of any view holds the view's elements in order, and writes through exactly when it is a view", () => {
  const dims = fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 });
  fc.assert(
    fc.property(dims, fc.nat(), fc.nat(), fc.nat(), (shape, a, b, c) => {
      const numel = shape.reduce((x, y) => x * y, 1);
      using base = Tensor.fromTypedArray(Float64Array.from({ length: numel }, (_, i) => i), shape, { dtype: "float64" });
      // A transpose of two dimensions and a narrow of one make the strided view.
      const d0 = a % shape.length, d1 = b % shape.length;
      using turned = base.transpose(d0, d1);
      const nd = c % shape.length, size = turned.shape[nd]!;
      const start = c % size, length = 1 + ((a + b) % (size - start));
      using view = turned.narrow(nd, start, length);
      const n = view.numel;
      // A random factorisation of its element count as the new shape.
      const target: number[] = [];
      let rest = n;
      for (let p = 2, seed = a + c; rest > 1 && target.length < 3; ) {
        if (rest % p === 0 && (seed++ % 3) !== 0) {
          target.push(p);
          rest /= p;
        } else if (p * p > rest) {
          target.push(rest);
          rest = 1;
        } else p++;
      }
      if (rest > 1 || target.length === 0) target.push(rest);
      if (b % 2 === 0 && target.length < 4) target.push(1);
      const expected = (() => {
        using inOrder = view.contiguous();
        return Array.from(inOrder.toTypedArray());
      })();
      using r = view.reshape(target);
      assertEquals(r.shape, target);
      assertEquals(Array.from(r.toTypedArray()), expected);
      // A view starts where its source does; a copy is memory of its own.
      const isView = r.dataAddress === view.dataAddress;
      r.fill(-1);
      using after = view.contiguous();
      const values = Array.from(after.toTypedArray());
      const written = values.every((v) => v === -1), untouched = values.every((v, i) => v === expected[i]);
      assert(written || untouched, "the source changed in part");
      assertEquals(written, isView, "writes through exactly when a view");
    }),
    { numRuns: 300 },
  );
});

test("contiguous copies a strided view into row-major order", () => {
  using t = Tensor.fromArray([[1, 2], [3, 4]], { dtype: "float64" });
  using tt = t.transpose();
  using c = tt.contiguous();
  assert(c.isContiguous(), "contiguous() is contiguous");
  assertEquals(Array.from(c.toTypedArray()), [1, 3, 2, 4]);
});

test("a disposed tensor refuses every use with a clear error, and dispose is idempotent", () => {
  const t = Tensor.ones([2, 2]);
  t.dispose();
  t.dispose();
  assert(t.disposed, "disposed is set");
  assertThrowsLLTM(() => t.toArray(), "DISPOSED", /has been disposed/);
  assertThrowsLLTM(() => t.transpose(), "DISPOSED", /transpose: the tensor has been disposed/);
  assertThrowsLLTM(() => t.fill(1), "DISPOSED", /has been disposed/);
});

test("memory lives while any view of it does", () => {
  const t = Tensor.fromArray([1, 2, 3]);
  const v = t.narrow(0, 1, 2);
  t.dispose();
  assertEquals(v.toArray(), [2, 3]);
  v.dispose();
});

test("`using` disposes at the end of the block", () => {
  let escaped: Tensor;
  {
    using t = Tensor.ones([1]);
    escaped = t;
  }
  assert(escaped.disposed, "disposed after the block");
});

test("bad factory arguments are refused", () => {
  assertThrowsLLTM(() => Tensor.zeros([0, 2]), "INVALID_ARGUMENT", /positive integer sizes/);
  assertThrowsLLTM(() => Tensor.zeros([1, 1, 1, 1, 1]), "INVALID_ARGUMENT", /1 to 4 dimensions/);
  assertThrowsLLTM(() => Tensor.zeros([2], { dtype: "int8" as never }), "INVALID_DTYPE", /"float32", "float64", "bfloat16", "float16", "int32", got "int8"/);
  assertThrowsLLTM(() => Tensor.fromArray([[1, 2], [3]]), "INVALID_ARGUMENT", /ragged/);
  assertThrowsLLTM(() => Tensor.fromTypedArray(new Float32Array(3), [2, 2]), "INVALID_ARGUMENT", /holds 4 elements but data has 3/);
  assertThrowsLLTM(() => Tensor.zeros([2], { device: "tpu" as never }), "INVALID_ARGUMENT", /device must be/);
});
