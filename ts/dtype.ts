/** Element types and the matching typed arrays. */
import { LLTMError } from "./errors.ts";

export type DType = "float32" | "float64";

/** Bytes per element (a comparison, not a lookup: this runs on every native call). */
export function itemSize(dtype: DType): number {
  return dtype === "float64" ? 8 : 4;
}

export function isDType(value: unknown): value is DType {
  return value === "float32" || value === "float64";
}

/** A host array of `length` elements; an LLTMError where the runtime cannot make one that large. */
export function typedArray(dtype: DType, length: number): Float32Array | Float64Array {
  try {
    return dtype === "float32" ? new Float32Array(length) : new Float64Array(length);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new LLTMError("OUT_OF_MEMORY", `cannot make a host array of ${length} ${dtype} elements: ${e.message}`);
  }
}
