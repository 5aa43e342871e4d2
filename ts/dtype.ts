/**
 * Element types of tensors: the FLOAT types of csrc/lltm_ops.def (float32,
 * float64, bfloat16, float16) and its INDEX type (int32, for token ids and
 * class targets), with their sizes from the generated table. The half types
 * are stored as 16-bit words; a host array of their storage holds the raw
 * bits (Uint16Array), and values cross to the host as float32.
 */
import { LLTMError } from "./errors.ts";
import { dtypeTable } from "./native/constants.ts";

type Table = typeof dtypeTable;

/** The element types a Tensor can have. */
export type DType = { [K in keyof Table]: Table[K]["class"] extends "FLOAT" | "INDEX" ? K : never }[keyof Table];

/** The float types, which the ops compute with. */
export type FloatDType = { [K in DType]: Table[K]["class"] extends "FLOAT" ? K : never }[DType];

/** The integer type of indices (token ids, targets, sampled indices). */
export type IndexDType = Exclude<DType, FloatDType>;

/** The dtypes, in the table's order. */
export const dtypes: readonly DType[] = (Object.keys(dtypeTable) as (keyof Table)[]).filter(
  (k): k is DType => dtypeTable[k].class === "FLOAT" || dtypeTable[k].class === "INDEX",
);

/** The float dtypes, in the table's order. */
export const floatDTypes: readonly FloatDType[] = dtypes.filter((d): d is FloatDType => dtypeTable[d].class === "FLOAT");

/** The types of 16-bit storage, computed through float32. */
export type HalfDType = { [K in DType]: Table[K]["bytes"] extends 2 ? K : never }[DType];

/** A host array holding a dtype's storage: its values for float32, float64 and int32, the raw bits of a half type. */
export type StorageArray = Float32Array | Float64Array | Uint16Array | Int32Array;

/** The typed array of each dtype's storage (a Record over DType: a dtype added to the table without one does not compile). */
const storageArrays: Record<DType, Float32ArrayConstructor | Float64ArrayConstructor | Uint16ArrayConstructor | Int32ArrayConstructor> = {
  float32: Float32Array, float64: Float64Array, bfloat16: Uint16Array, float16: Uint16Array, int32: Int32Array,
};

/** The typed array that holds a dtype's values on the host: itself, float32 for a half type. */
export type ValueArray = Float32Array | Float64Array | Int32Array;

/** Bytes per element. */
export function itemSize(dtype: DType): number {
  return dtypeTable[dtype].bytes;
}

export function isDType(value: unknown): value is DType {
  return typeof value === "string" && (dtypes as readonly string[]).includes(value);
}

/** Whether `dtype` is stored in 16 bits (and read and written as float32 values). */
export function isHalf(dtype: DType): dtype is HalfDType {
  return dtypeTable[dtype].bytes === 2;
}

/** Whether `dtype` is a float type (not int32). */
export function isFloat(dtype: DType): dtype is FloatDType {
  return dtypeTable[dtype].class === "FLOAT";
}

/**
 * The type each dtype is computed in (as csrc/lltm_ops.def says: float64 in
 * float64, the others in float32), and so the one its values cross to the host
 * in. A Record over DType: a dtype added to the table without one here does not compile.
 */
const computeTypes: Record<DType, "float32" | "float64" | "int32"> = {
  float32: "float32", float64: "float64", bfloat16: "float32", float16: "float32", int32: "int32",
};

/** The dtype whose values a host array of `dtype`'s values holds. */
export function valueDType(dtype: DType): "float32" | "float64" | "int32" {
  return computeTypes[dtype];
}

/** A dtype from user input, or an LLTMError naming the accepted ones. */
export function checkDType(dtype: unknown, what = "dtype"): DType {
  if (!isDType(dtype)) {
    throw new LLTMError("INVALID_DTYPE", `${what} must be ${dtypes.map((d) => JSON.stringify(d)).join(", ")}, got ${JSON.stringify(dtype)}`);
  }
  return dtype;
}

function hostArray<A>(make: () => A, length: number, dtype: string): A {
  try {
    return make();
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new LLTMError("OUT_OF_MEMORY", `cannot make a host array of ${length} ${dtype} elements: ${e.message}`);
  }
}

/** A host array of `length` elements of `dtype`'s storage; an LLTMError where the runtime cannot make one that large. */
export function storageArray(dtype: DType, length: number): StorageArray {
  const Array = storageArrays[dtype];
  return hostArray(() => new Array(length), length, dtype);
}

/** A host array of `length` values of `dtype` (float32 for the half types). */
export function valueArray(dtype: DType, length: number): ValueArray {
  // The storage array of the compute type: float32 and float64 store their values as they are.
  const Array = storageArrays[computeTypes[dtype]] as Float32ArrayConstructor | Float64ArrayConstructor | Int32ArrayConstructor;
  return hostArray(() => new Array(length), length, dtype);
}

/** The elements of `dtype`'s storage that fill `buffer`, viewed as its storage array. */
export function storageView(dtype: DType, buffer: ArrayBuffer): StorageArray {
  return new storageArrays[dtype](buffer);
}
