/** Random sequence cases for the sequence engine's tests: sizes and [T, B, X] tensors laid out as views. */
import fc from "fast-check";

import { type DeviceLike, type DType, relativeError, Tensor } from "../ts/index.ts";
import { distance, type Layout, norm, relayout, smallSize, tolerance, unitRoundoff } from "./helpers.ts";

/** How a [T, B, X] test tensor is laid out in memory. */
export type SequenceLayout = "contiguous" | "batchMajor" | "strided" | "narrowed" | "featureMajor" | "expanded";
export const sequenceLayouts: readonly SequenceLayout[] = [
  "contiguous", "batchMajor", "strided", "narrowed", "featureMajor", "expanded",
];
export const sequenceLayout = fc.constantFrom(...sequenceLayouts);

/**
 * A [T, B, X] tensor of seeded values as `layout`: contiguous, a transposed
 * [B, T, X] tensor (steps not evenly spaced in memory), every other element
 * of the last dimension, a window of a larger tensor, X outermost (unit
 * stride along T), or one step broadcast over T with stride 0.
 */
export function makeSequence(shape: readonly [number, number, number], layout: SequenceLayout, seed: number, dtype: DType, device: DeviceLike): Tensor {
  const [T, B, X] = shape;
  const o = { dtype, device, seed };
  switch (layout) {
    case "contiguous":
      return Tensor.randn(shape, o);
    case "batchMajor": {
      using base = Tensor.randn([B, T, X], o);
      return base.transpose(0, 1);
    }
    case "strided": {
      using base = Tensor.randn([T, B, 2 * X + 1], o);
      return base.slice(2, 1, 2 * X + 1, 2);
    }
    case "narrowed": {
      using base = Tensor.randn([T + 1, B + 2, X + 3], o);
      using a = base.narrow(0, 1, T);
      using b = a.narrow(1, 2, B);
      return b.narrow(2, 1, X);
    }
    case "featureMajor": {
      using base = Tensor.randn([X, B, T], o);
      return base.transpose(0, 2);
    }
    case "expanded": {
      using one = Tensor.randn([1, B, X], o);
      return one.expand(shape);
    }
  }
}

/** T from 1 to 70 (mostly short, with the edges 63..65 and 70), and B, F, S with the reference's work bounded. */
export const steps = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 1, max: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom(1, 63, 64, 65, 70) },
  { weight: 2, arbitrary: fc.integer({ min: 9, max: 70 }) },
);

export interface SequenceCase {
  steps: number;
  batch: number;
  features: number;
  state: number;
}

export const sequenceCase: fc.Arbitrary<SequenceCase> = fc
  .record({ steps, batch: smallSize, features: smallSize, state: smallSize })
  .filter(({ steps: T, batch: B, features: F, state: S }) => T * B * 3 * S * (S + F) <= 400_000);

/**
 * Relative error bound of the engine against the float64 reference. Up to
 * T = 64 it is the cell's own (tests/helpers.ts); beyond, float32 gets 1e-5
 * per 64 steps: each step's rounding (a few ulps, ~1e-7) is carried through
 * every later step by the recurrence, so the bound grows with T (measured:
 * at most ~2e-6 at T = 70 in these tests).
 */
export function sequenceTolerance(dtype: DType, T: number): number {
  if (dtype === "float64") return tolerance.float64;
  return tolerance[dtype] * Math.max(1, Math.ceil(T / 64));
}

/**
 * The error allowed relative to the norm of a gradient's terms' magnitudes
 * (where the gradient's own terms cancel): a tenth of the relative bound, or
 * eight units of rounding for each of the T + 1 steps the gradient is carried
 * through, whichever is larger. Each step multiplies the gradient by factors
 * the forward rounded (i, o, z, tanh of the cell) and rounds the backward's
 * own products and sums, about eight roundings; where the gradient vanishes
 * through the recurrence (a state held at a fixed point by a constant input)
 * those relative errors add up step after step instead of averaging out.
 */
export function magnitudeTolerance(dtype: DType, T: number): number {
  const eps = unitRoundoff[dtype];
  return Math.max(sequenceTolerance(dtype, T) / 10, 8 * (T + 1) * eps);
}

/** fc.assert whose failure carries the failing assertion's message (fast-check keeps it as the error's cause). */
export function assertProperty<Ts extends unknown[]>(property: fc.IProperty<Ts>, parameters: fc.Parameters<Ts>): void {
  try {
    fc.assert(property, parameters);
  } catch (e) {
    const cause = (e as Error).cause;
    throw new Error(`${(e as Error).message}\n${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/**
 * Weights [3S, S+F] of seeded normal values scaled by 1/sqrt(S+F) (as
 * ../shared/bench/torch_lltm.py and PyTorch's initialisation scale them),
 * laid out as `layout`. At unit scale the recurrence is chaotic over tens of
 * steps: it amplifies every rounding, so a float32 run of any implementation
 * (the per-step path too) is 1e-4 away from float64 there, which measures
 * the problem's conditioning rather than the kernels' rounding.
 */
export function makeWeights(S: number, F: number, layout: Layout, seed: number, dtype: DType, device: DeviceLike): Tensor {
  using base = Tensor.randn([3 * S, S + F], { dtype: "float64", seed });
  const scale = 1 / Math.sqrt(S + F);
  const values = base.toTypedArray().map((v) => v * scale);
  using scaled = Tensor.fromTypedArray(values, [3 * S, S + F], { dtype, device });
  return relayout(scaled, layout);
}

/** The magnitudes of a gradient's terms (see sequence_reference.ts) and the error allowed relative to them. */
export interface Magnitude {
  values: ArrayLike<number>;
  tol: number;
}

/**
 * Whether `actual` is within relative error `tol` of `expected`; or, for a
 * gradient whose terms cancel, within `magnitude.tol` of the norm of the
 * terms' magnitudes: rounding errors scale with the terms, not with a sum
 * that cancels, so no float32 implementation meets 1e-5 of such a sum.
 * `approximations` is 2 when both sides round. A gradient that has vanished
 * below what the dtype resolves (float32's normal numbers end at 1.2e-38; a
 * saturated cell's slope over a long sequence reaches e^-100) counts as
 * matching within that floor. Returns a message saying why not, or undefined.
 */
export function mismatch(
  actual: ArrayLike<number>, expected: ArrayLike<number>, tol: number, magnitude?: Magnitude,
  approximations = 1,
): string | undefined {
  const err = relativeError(actual, expected);
  if (err <= tol) return undefined;
  const diff = distance(actual, expected);
  const floor = (actual instanceof Float32Array ? 1e-30 : 1e-290) * Math.sqrt(actual.length);
  if (diff <= floor) return undefined;
  if (magnitude === undefined) return `relative error ${err} > ${tol}`;
  const scale = norm(magnitude.values), allowed = approximations * magnitude.tol;
  if (diff <= allowed * scale) return undefined;
  return `relative error ${err} > ${tol}, and ${diff / scale} of the terms' magnitude > ${allowed}`;
}
