/**
 * lltm_tensor descriptors (csrc/lltm.h), written into blocks of native
 * memory: a call passes the addresses of its block's slots, so no per-call
 * allocation or pointer conversion is needed.
 *
 * Layout (ts/native/constants.ts, checked against the library at open):
 * void* data; int64 ndim; int64 sizes[MAX_DIMS]; int64 strides[MAX_DIMS],
 * written as pairs of 32-bit words.
 */
import { LLTMError } from "../errors.ts";
import { layoutConstants, MAX_DIMS, TENSOR_BYTES } from "./constants.ts";
import { native } from "./library.ts";

/** What a descriptor is written from: a tensor, or (in tests of the C ABI) any such record. */
export interface Describable {
  /**
   * Unique in the process (newDescribableId): a view never changes, so a slot
   * that already describes this id is not written again.
   */
  readonly id: number;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  /** Address of the first element. */
  readonly dataAddress: number;
  readonly disposed: boolean;
}

let lastId = 0;

/** A new id for a Describable. */
export function newDescribableId(): number {
  return ++lastId;
}

const SLOT_WORDS = TENSOR_BYTES / 4;
const NDIM_WORD = layoutConstants["offsetof(lltm_tensor, ndim)"] / 4;
const SIZES_WORD = layoutConstants["offsetof(lltm_tensor, sizes)"] / 4;
const STRIDES_WORD = layoutConstants["offsetof(lltm_tensor, strides)"] / 4;
const TWO_32 = 4294967296;

/**
 * `count` descriptor slots in native host memory, then `wordCount` 64-bit
 * words, then `codeCount` int32 codes: the arguments of an entry point that
 * takes them in memory (lltm_forward_v, lltm_sequence_forward_v, ...), so
 * that a call passes two or three addresses.
 */
export class DescriptorBlock implements Disposable {
  readonly count: number;
  /** The address of the first slot. */
  readonly base: number;
  /** The address of the 64-bit words, after the last slot. */
  readonly words64: number;
  /** The address of the codes, after the words. */
  readonly codes: number;
  private readonly words: Int32Array;
  private readonly wordsAt: number;
  private readonly codesAt: number;
  /** The id each slot describes (0: none). */
  private readonly ids: Float64Array;
  /** The shape and stride arrays each slot's sizes and strides were written from. */
  private readonly shapes: (readonly number[] | undefined)[];
  private readonly strides: (readonly number[] | undefined)[];

  constructor(count: number, codeCount = 0, wordCount = 0) {
    this.count = count;
    const lib = native();
    const out = new Uint32Array(2);
    const bytes = count * TENSOR_BYTES + wordCount * 8 + codeCount * 4;
    const status = lib.lltm_alloc(bytes, 0, 0, out);
    if (status !== 0) throw new LLTMError("OUT_OF_MEMORY", `descriptor block: ${lib.lltm_last_error()}`);
    this.base = out[0]! + out[1]! * TWO_32;
    this.words64 = this.base + count * TENSOR_BYTES;
    this.codes = this.words64 + wordCount * 8;
    this.wordsAt = count * SLOT_WORDS;
    this.codesAt = this.wordsAt + 2 * wordCount;
    this.words = new Int32Array(lib.view(this.base, bytes));
    this.ids = new Float64Array(count);
    this.shapes = new Array(count).fill(undefined);
    this.strides = new Array(count).fill(undefined);
  }

  /** Writes `t` into slot `slot` (unless it already holds it) and returns the slot's address. */
  write(slot: number, t: Describable): number {
    if (!(slot >= 0 && slot < this.count)) {
      throw new LLTMError("INTERNAL", `descriptor slot ${slot} is outside a block of ${this.count}`);
    }
    if (t.disposed) throw new LLTMError("DISPOSED", "a disposed tensor was passed to a native call");
    const address = this.base + slot * TENSOR_BYTES;
    if (this.ids[slot] === t.id) return address;
    const w = this.words, o = slot * SLOT_WORDS;
    const data = t.dataAddress;
    w[o] = data >>> 0;
    w[o + 1] = (data / TWO_32) >>> 0;
    this.ids[slot] = t.id;
    const shape = t.shape, strides = t.strides, n = shape.length;
    // Arrays of a view never change, so the same arrays mean the same sizes and strides.
    if (this.shapes[slot] === shape && this.strides[slot] === strides) return address;
    this.shapes[slot] = shape;
    this.strides[slot] = strides;
    w[o + NDIM_WORD] = n;
    w[o + NDIM_WORD + 1] = 0;
    // Only the first ndim sizes and strides are read (csrc/lltm.h); an ndim above
    // MAX_DIMS is refused by the native checks, so nothing is written past the slot.
    for (let d = 0; d < n && d < MAX_DIMS; d++) {
      const size = shape[d]!, stride = strides[d]!;
      const i = o + SIZES_WORD + 2 * d, j = o + STRIDES_WORD + 2 * d;
      // Two's complement words, so that a bad (negative) value reaches the native checks intact.
      w[i] = size >>> 0;
      w[i + 1] = highWord(size);
      w[j] = stride >>> 0;
      w[j + 1] = highWord(stride);
    }
    return address;
  }

  /** Sets code `i` (after the words). */
  code(i: number, value: number): void {
    this.words[this.codesAt + i] = value;
  }

  /** Sets 64-bit word `i` to an integer of up to 2^53 in magnitude (two's complement). */
  word(i: number, value: number): void {
    const w = this.words, o = this.wordsAt + 2 * i;
    w[o] = value >>> 0;
    w[o + 1] = highWord(value);
  }

  /** 64-bit word `i` as a number (exact below 2^53; written by the callee, as lltm_sequence_reserve_bytes_v's bytes). */
  readWord(i: number): number {
    const w = this.words, o = this.wordsAt + 2 * i;
    return (w[o]! >>> 0) + (w[o + 1]! >>> 0) * TWO_32;
  }

  private freed = false;

  /** Frees the block (blocks of the call layer live as long as the process). */
  dispose(): void {
    if (this.freed) return;
    this.freed = true;
    native().lltm_free(this.base, 0, 0);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** The upper 32 bits of an integer's two's complement (a division only where they are not 0). */
function highWord(value: number): number {
  return value >= 0 && value < TWO_32 ? 0 : Math.floor(value / TWO_32);
}

/**
 * Whether the elements two views may touch share bytes: their ranges from
 * the lowest to one past the highest element's byte (conservative for
 * interleaved views of one block, exact otherwise).
 */
export function overlaps(a: Describable, b: Describable, itemBytes: number): boolean {
  const aStart = a.dataAddress, bStart = b.dataAddress;
  return aStart < bStart + extentBytes(b, itemBytes) && bStart < aStart + extentBytes(a, itemBytes);
}

function extentBytes(t: Describable, itemBytes: number): number {
  let last = 0;
  for (let d = 0; d < t.shape.length; d++) last += (t.shape[d]! - 1) * t.strides[d]!;
  return (last + 1) * itemBytes;
}
