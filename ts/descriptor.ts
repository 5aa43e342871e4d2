/**
 * lltm_tensor descriptors for native calls, written into one block of native
 * memory reused by every call: a call passes the addresses of its slots, so
 * no per-call allocation or pointer conversion is needed.
 *
 * Layout (csrc/lltm.h): void* data; int64 ndim; int64 sizes[4]; int64 strides[4]
 * = 80 bytes, written as pairs of 32-bit words.
 */
import { allocate, native } from "./native/library.ts";

const SLOT_BYTES = 80;
const SLOT_WORDS = SLOT_BYTES / 4;
const MAX_DIMS = 4;
export const SLOTS = 16;

export interface Describable {
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  /** Address of the first element. */
  readonly dataAddress: number;
}

let base = 0;
let words: Int32Array | undefined;

function arena(): Int32Array {
  if (!words) {
    base = allocate(SLOTS * SLOT_BYTES, 0, 0);
    words = new Int32Array(native().view(base, SLOTS * SLOT_BYTES));
  }
  return words;
}

const TWO_32 = 4294967296;

/** Writes `t` into descriptor slot `slot` and returns the slot's address. */
export function describe(slot: number, t: Describable): number {
  const w = words ?? arena();
  const o = slot * SLOT_WORDS;
  const address = t.dataAddress;
  w[o] = address >>> 0;
  w[o + 1] = (address / TWO_32) >>> 0;
  const shape = t.shape, strides = t.strides, n = shape.length;
  w[o + 2] = n;
  w[o + 3] = 0;
  // Only the first ndim sizes and strides are read (csrc/lltm.h), so the rest are left as they are.
  // Never past the slot: an ndim above MAX_DIMS is refused by the native checks.
  for (let d = 0; d < n && d < MAX_DIMS; d++) {
    const i = o + 4 + 2 * d, size = shape[d]!, stride = strides[d]!;
    // Two's complement words, so that a bad (negative) value reaches the native checks intact.
    w[i] = size >>> 0;
    w[i + 1] = Math.floor(size / TWO_32);
    w[i + 8] = stride >>> 0;
    w[i + 9] = Math.floor(stride / TWO_32);
  }
  return base + slot * SLOT_BYTES;
}
