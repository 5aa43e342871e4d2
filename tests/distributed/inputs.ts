/**
 * The inputs of the collectives tests, the same in the test process and in
 * every rank: each rank's tensor of each dtype from a seed of its own, and
 * the host computation of what each collective must give.
 */
import { type DType, dtypes, Random, Tensor } from "../../ts/index.ts";

export const ELEMENTS = 12;

/** Rank `rank`'s input of `dtype` (values exactly representable in it), as host values. */
export function rankValues(dtype: DType, rank: number, elements = ELEMENTS): number[] {
  if (dtype === "int32") {
    const random = new Random(1000 + rank);
    return Array.from({ length: elements }, () => (random.nextUint32() % 2001) - 1000);
  }
  using t = Tensor.randn([elements], { dtype, seed: 100 * (rank + 1) + dtypes.indexOf(dtype) });
  return [...t.toTypedArray()];
}

/** The values rounded to `dtype`, as the library rounds a float64 (nearest even). */
export function rounded(values: readonly number[], dtype: DType): number[] {
  if (dtype === "int32") return values.map((v) => v | 0);
  using t = Tensor.fromTypedArray(Float64Array.from(values), [values.length], { dtype });
  return [...t.toTypedArray()];
}

/** Element-wise sum (or mean) over ranks, in rank order, in float64, rounded once to the dtype. */
export function reduced(dtype: DType, worldSize: number, op: "sum" | "mean", elements = ELEMENTS): number[] {
  const sum = new Array<number>(elements).fill(0);
  for (let r = 0; r < worldSize; r++) {
    const v = rankValues(dtype, r, elements);
    for (let i = 0; i < elements; i++) sum[i] = dtype === "int32" ? (sum[i]! + v[i]!) | 0 : sum[i]! + v[i]!;
  }
  return rounded(op === "mean" ? sum.map((s) => s / worldSize) : sum, dtype);
}
