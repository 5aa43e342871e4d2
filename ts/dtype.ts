/** Element types: the C ABI's lltm_dtype and the matching typed arrays. */
export type DType = "float32" | "float64";

export type TypedArrayOf<D extends DType> = D extends "float32" ? Float32Array : Float64Array;

export const dtypeCode: Record<DType, number> = { float32: 0, float64: 1 };
export const itemSize: Record<DType, number> = { float32: 4, float64: 8 };

export function isDType(value: unknown): value is DType {
  return value === "float32" || value === "float64";
}

export function typedArray(dtype: DType, length: number): Float32Array | Float64Array {
  return dtype === "float32" ? new Float32Array(length) : new Float64Array(length);
}
