/**
 * A contiguous tensor's storage as bytes and back, and the host reduction
 * of the CPU group: every rank's values combined in rank order, so that all
 * ranks compute the same result bit for bit. Float values are summed in
 * float64 and rounded once to the dtype (half types through their float32
 * values); int32 wraps on overflow as two's complement, as NCCL's sum does.
 */
import type { DType } from "../dtype.ts";
import { noGrad } from "../autograd/grad_mode.ts";
import { Tensor } from "../tensor/index.ts";
import type { ReduceOp } from "./group.ts";

/** The tensor's stored bytes (read to the host after its device's queued work). */
export function tensorBytes(t: Tensor): Uint8Array {
  const a = t.toTypedArray({ raw: true });
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** A host tensor of `dtype` holding `bytes` as its storage. */
export function tensorOfBytes(bytes: Uint8Array, dtype: DType, shape: readonly number[]): Tensor {
  // A copy of its own (a Buffer's slice() would be a view of the socket's chunk).
  const copy = new Uint8Array(bytes).buffer;
  switch (dtype) {
    case "float32":
      return Tensor.fromTypedArray(new Float32Array(copy), shape);
    case "float64":
      return Tensor.fromTypedArray(new Float64Array(copy), shape);
    case "int32":
      return Tensor.fromTypedArray(new Int32Array(copy), shape);
    case "bfloat16":
    case "float16":
      return Tensor.fromTypedArray(new Uint16Array(copy), shape, { dtype });
  }
}

/** The element values of stored bytes: float32 for the half types, as the library converts them. */
function values(bytes: Uint8Array, dtype: DType): Float32Array | Float64Array | Int32Array {
  if (dtype === "bfloat16" || dtype === "float16") {
    using t = tensorOfBytes(bytes, dtype, [bytes.byteLength / 2]);
    return t.toTypedArray();
  }
  using t = tensorOfBytes(bytes, dtype, [bytes.byteLength / (dtype === "float64" ? 8 : 4)]);
  return t.toTypedArray() as Float32Array | Float64Array | Int32Array;
}

/** The parts of `payloads` (one per rank, in rank order) combined by `op`, as a host tensor of `dtype` and `shape`. */
export function reduceBytes(payloads: readonly Uint8Array[], dtype: DType, shape: readonly number[], op: ReduceOp): Tensor {
  if (dtype === "int32") {
    const sum = new Int32Array(payloads[0]!.byteLength / 4);
    for (const p of payloads) {
      const v = values(p, dtype);
      for (let i = 0; i < sum.length; i++) sum[i] = (sum[i]! + v[i]!) | 0;
    }
    return Tensor.fromTypedArray(sum, shape);
  }
  const sum = new Float64Array(payloads[0]!.byteLength / (dtype === "float64" ? 8 : dtype === "float32" ? 4 : 2));
  for (const p of payloads) {
    const v = values(p, dtype);
    for (let i = 0; i < sum.length; i++) sum[i]! += v[i]!;
  }
  if (op === "mean") for (let i = 0; i < sum.length; i++) sum[i]! /= payloads.length;
  return Tensor.fromTypedArray(sum, shape, { dtype });
}

/** Copies a host result into the caller's tensor (on whatever device it lives), as a collective's in-place write. */
export function writeInto(target: Tensor, result: Tensor): void {
  try {
    noGrad(() => target.copyFrom(result));
  } finally {
    result.dispose();
  }
}
