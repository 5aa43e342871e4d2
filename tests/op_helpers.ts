/**
 * What the tests of the model ops share: the devices to run on (CUDA
 * skipped where absent), host values of a tensor in float64, int32 tensors,
 * and central differences of a scalar function of host values.
 */
import { type DeviceLike, Tensor } from "../ts/index.ts";
import { cudaSkipReason, test } from "./harness.ts";

/** test(name, body) once per device; the CUDA one skipped where there is no GPU. */
export function testOnDevices(name: string, body: (device: DeviceLike) => void): void {
  test(`${name} (cpu)`, () => body("cpu"));
  test(`${name} (cuda)`, () => body("cuda"), { skip: cudaSkipReason() });
}

/** The elements of t, row-major, as float64. */
export function values(t: Tensor): Float64Array {
  return Float64Array.from(t.toTypedArray());
}

/** An int32 tensor of `data` with `shape` (default 1-D). */
export function ints(data: readonly number[], shape?: readonly number[], device: DeviceLike = "cpu"): Tensor {
  return Tensor.fromTypedArray(Int32Array.from(data), shape, { device });
}

/** Deterministic pseudo-random integers in [0, n), from a seed. */
export function randomInts(count: number, n: number, seed: number): number[] {
  let s = (seed * 2654435761 + 1) >>> 0;
  return Array.from({ length: count }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  });
}

/** Central differences of f at x with step h, one coordinate at a time. */
export function centralDifferences(f: (x: Float64Array) => number, x: Float64Array, h = 1e-6): Float64Array {
  const g = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const saved = x[i]!;
    x[i] = saved + h;
    const up = f(x);
    x[i] = saved - h;
    const down = f(x);
    x[i] = saved;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

/** The largest |a - b| relative to max(1, |b|). */
export function maxRelative(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < b.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!) / Math.max(1, Math.abs(b[i]!)));
  return worst;
}
