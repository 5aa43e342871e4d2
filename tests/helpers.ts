/** Shared pieces of the LLTM tests: random inputs as arbitrary views, and tolerances. */
import fc from "fast-check";

import {
  type DeviceLike, type DType, type Float32MatmulPrecision, getFloat32MatmulPrecision, type ReferenceBackward,
  setFloat32MatmulPrecision, Tensor,
} from "../ts/index.ts";
import { assert } from "./harness.ts";

/**
 * Relative error bounds against the float64 reference (on the same inputs,
 * rounded to the dtype), for the outputs of one op. float32 and float64 as
 * their kernels' accumulated rounding allows. The half types are computed in
 * float32 (error ~1e-6) and their outputs rounded once to the storage type:
 * one rounding is at most the unit roundoff u relative to each element, so at
 * most u in the norm (bfloat16 keeps 8 significant bits, u = 2^-8 ≈ 3.9e-3;
 * float16 11 bits, u = 2^-11 ≈ 4.9e-4); the bound is 2.5u to 4u, leaving room
 * for an op whose outputs feed each other through the storage type (the
 * backward's saved gates are rounded once already).
 */
/** The unit roundoff of each dtype: half the distance from 1 to the next value. */
export const unitRoundoff: Record<DType, number> = { float64: 2 ** -53, float32: 2 ** -24, bfloat16: 2 ** -8, float16: 2 ** -11, int32: 0 };

export const tolerance: Record<DType, number> = { float64: 1e-12, float32: 1e-5, bfloat16: 1e-2, float16: 2e-3, int32: 0 };

/** The Euclidean norm of the values. */
export function norm(a: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! ** 2;
  return Math.sqrt(sum);
}

/** The Euclidean norm of actual - expected. */
export function distance(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  return norm(Float64Array.from(actual, (v, i) => v - expected[i]!));
}

/**
 * The error of `actual` against the reference `expected`, relative to the
 * reference's norm but never to less than that of values of size one. The
 * tests' inputs make every output of order one; an output far smaller is a sum
 * whose terms cancelled, and its rounding error is that of the terms, so
 * measured against the small sum a correct kernel fails (a 1x77x1 float32
 * case: a gate sum of 1e-3 off by 1.5e-7, a relative 1.5e-4).
 */
export function referenceError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  if (actual.length !== expected.length) throw new Error(`referenceError: lengths ${actual.length} and ${expected.length} differ`);
  return distance(actual, expected) / Math.max(norm(expected), Math.sqrt(expected.length));
}

/** How a test tensor of a given logical shape is laid out in memory. */
export type Layout = "contiguous" | "transposed" | "narrowed" | "strided" | "expanded";
export const layouts: readonly Layout[] = ["contiguous", "transposed", "narrowed", "strided", "expanded"];

/**
 * A 2-D (or 1-D) tensor with `shape` whose values come from `seed`, laid out
 * as `layout`: a transposed copy, a window of a larger tensor, every other
 * column, or a row broadcast with stride 0 (values then repeat across rows).
 */
export function makeInput(
  shape: readonly number[], layout: Layout, seed: number, dtype: DType, device: DeviceLike = "cpu", scale = 1,
): Tensor {
  const opts = { dtype, device, seed };
  const randn = (dims: readonly number[]): Tensor => scaledRandn(dims, opts, scale);
  const [r, c] = shape.length === 1 ? [shape[0]!, 1] : [shape[0]!, shape[1]!];
  const oneD = shape.length === 1;
  switch (layout) {
    case "contiguous":
      return randn(shape);
    case "transposed": {
      if (oneD) return randn(shape);
      using base = randn([c, r]);
      return base.transpose();
    }
    case "narrowed": {
      using base = randn(oneD ? [r + 3] : [r + 2, c + 3]);
      if (oneD) return base.narrow(0, 2, r);
      using rows = base.narrow(0, 1, r);
      return rows.narrow(1, 2, c);
    }
    case "strided": {
      using base = randn(oneD ? [2 * r] : [r, 2 * c + 1]);
      return oneD ? base.slice(0, 0, 2 * r, 2) : base.slice(1, 1, 2 * c + 1, 2);
    }
    case "expanded": {
      if (oneD) {
        using one = randn([1]);
        return one.expand(shape);
      }
      using row = randn([1, c]);
      return row.expand(shape);
    }
  }
}

/**
 * Standard normal values times `scale`. Weights are drawn with scale 1/sqrt(S+F), as a module
 * initialises them: with scale 1 the gate sums grow as sqrt(S+F), every gate saturates, and a
 * float32 sum of several hundred terms that cancel to a tiny result cannot meet any fixed
 * relative bound, whatever the kernel.
 */
function scaledRandn(shape: readonly number[], opts: { dtype: DType; device: DeviceLike; seed: number }, scale: number): Tensor {
  if (scale === 1) return Tensor.randn(shape, opts);
  return randnScaled(shape, opts.seed, opts.dtype, scale, opts.device);
}

/** Normal values from `seed`, drawn in float64, times `scale`, rounded once to `dtype`, on `device`. */
export function randnScaled(shape: readonly number[], seed: number, dtype: DType, scale = 1, device: DeviceLike = "cpu"): Tensor {
  using base = Tensor.randn(shape, { dtype: "float64", seed });
  return Tensor.fromTypedArray(base.toTypedArray().map((v) => v * scale), shape, { dtype, device });
}

/** Asserts that `actual` is within `tol` of `expected` (referenceError's measure), naming `what`. */
export function assertClose(
  what: string, actual: Tensor, expected: ArrayLike<number>, tol: number, magnitudes?: ArrayLike<number>,
): void {
  const err = sumError(actual.toTypedArray(), expected, magnitudes);
  assert(err <= tol, `${what}: error ${err.toExponential(2)} > ${tol}`);
}

/**
 * referenceError; for a sum given its terms' magnitudes (element by element), the error relative to those where
 * smaller. Rounding scales with the terms, not with a sum that cancels: a half type's step backward rounds each
 * gate gradient before its products (u of the magnitudes) and the sum once, which bounds it by 2u of the
 * magnitudes, within each type's tolerance, while relative to the sum alone no bound holds (a float16 dBias
 * over 170 rows measured 2.1e-3 of it).
 */
export function sumError(actual: ArrayLike<number>, expected: ArrayLike<number>, magnitudes?: ArrayLike<number>): number {
  const err = referenceError(actual, expected);
  if (magnitudes === undefined) return err;
  return Math.min(err, distance(actual, expected) / Math.max(norm(magnitudes), Math.sqrt(magnitudes.length)));
}

/** The terms' magnitudes of a step backward's output where it is a sum (all but dOldCell), from the reference. */
export function stepMagnitudes(ref: ReferenceBackward, name: keyof ReferenceBackward["magnitudes"] | "dOldCell"): ArrayLike<number> | undefined {
  return name === "dOldCell" ? undefined : ref.magnitudes[name].data;
}

/** Sizes from 1 to 257, mostly small (the reference is plain loops), with odd and non-power-of-two values. */
export const smallSize = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(1, 2, 3, 17, 31, 33, 63, 65) },
  { weight: 1, arbitrary: fc.integer({ min: 13, max: 257 }) },
);

export interface CaseSizes {
  batch: number;
  features: number;
  state: number;
}

/** B, F and S, keeping the reference's work (B * 3S * (S+F)) bounded so that the suite stays fast. */
export const caseSizes: fc.Arbitrary<CaseSizes> = fc
  .record({ batch: smallSize, features: smallSize, state: smallSize })
  .filter(({ batch, features, state }) => batch * 3 * state * (state + features) <= 1_500_000);

export const layout = fc.constantFrom(...layouts);
export const dtype = fc.constantFrom<DType>("float32", "float64");

export function disposeAll(...groups: (Disposable | undefined)[]): void {
  for (const g of groups) g?.[Symbol.dispose]();
}

/** A copy of `t` laid out as `layout` ("expanded" cannot hold arbitrary values, so it becomes "transposed"). */
export function relayout(t: Tensor, layout: Layout): Tensor {
  const oneD = t.ndim === 1;
  const [r, c] = oneD ? [t.shape[0]!, 1] : [t.shape[0]!, t.shape[1]!];
  const opts = { dtype: t.dtype, device: t.device };
  let view: Tensor;
  if (layout === "contiguous" || (oneD && layout !== "strided" && layout !== "narrowed")) {
    view = Tensor.empty(t.shape, opts);
  } else if (layout === "narrowed") {
    using base = Tensor.empty(oneD ? [r + 3] : [r + 2, c + 3], opts);
    if (oneD) view = base.narrow(0, 2, r);
    else {
      using rows = base.narrow(0, 1, r);
      view = rows.narrow(1, 2, c);
    }
  } else if (layout === "strided") {
    using base = Tensor.empty(oneD ? [2 * r] : [r, 2 * c + 1], opts);
    view = oneD ? base.slice(0, 0, 2 * r, 2) : base.slice(1, 1, 2 * c + 1, 2);
  } else {
    using base = Tensor.empty([c, r], opts);
    view = base.transpose();
  }
  view.copyFrom(t);
  return view;
}

/** body() with float32 products at `precision`, the setting restored after. */
export function withPrecision<T>(precision: Float32MatmulPrecision, body: () => T): T {
  const before = getFloat32MatmulPrecision();
  setFloat32MatmulPrecision(precision);
  try {
    return body();
  } finally {
    setFloat32MatmulPrecision(before);
  }
}
