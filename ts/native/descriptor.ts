/**
 * lltm_tensor descriptors (csrc/lltm.h), written into native memory: a call
 * passes the address of its block, so no per-call allocation or pointer
 * conversion is needed. A slot that already describes a view is not written
 * again (a view never changes), so a tensor passed again in the same position,
 * as weights are step after step, costs a comparison.
 *
 * Layout (ts/native/abi.generated.ts, checked against the library at open):
 * void* data; int64 ndim; int64 sizes[MAX_DIMS]; int64 strides[MAX_DIMS];
 * int64 dtype, written as pairs of 32-bit words.
 */
import { LLTMError } from "../errors.ts";
import { dtypeCode, type ElementType, layoutConstants, MAX_DIMS, TENSOR_BYTES } from "./constants.ts";
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
  readonly dtype: ElementType;
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
const DTYPE_WORD = layoutConstants["offsetof(lltm_tensor, dtype)"] / 4;
const TWO_32 = 4294967296;
const BYTE_STRIDES: readonly number[] = [1];

/**
 * Host memory from lltm_alloc, zeroed (a field a caller leaves unset, such as
 * a call block's flags, reads as 0, not as whatever the allocator reused): its
 * address and a view of its 32-bit words.
 */
export function hostBlock(bytes: number, what: string): { address: number; words: Int32Array } {
  const lib = native();
  const out = new Uint32Array(2);
  const status = lib.lltm_alloc(bytes, 0, 0, out);
  if (status !== 0) throw new LLTMError("OUT_OF_MEMORY", `${what}: ${lib.lltm_last_error()}`);
  const address = out[0]! + out[1]! * TWO_32;
  const words = new Int32Array(lib.view(address, bytes));
  words.fill(0);
  return { address, words };
}

/** `count` consecutive descriptors in the words `words` from word `at`, at native address `base`. */
export class Descriptors {
  readonly count: number;
  /** The address of the first descriptor. */
  readonly base: number;
  private readonly words: Int32Array;
  private readonly at: number;
  /** The id each slot describes (0: none). */
  private readonly ids: Float64Array;
  /** The element type each slot's dtype word was written for (undefined: none yet). */
  private readonly dtypes: (ElementType | undefined)[];
  /** The shape and stride arrays each slot's sizes and strides were written from. */
  private readonly shapes: (readonly number[] | undefined)[];
  private readonly strides: (readonly number[] | undefined)[];

  constructor(words: Int32Array, at: number, base: number, count: number) {
    this.words = words;
    this.at = at;
    this.base = base;
    this.count = count;
    this.ids = new Float64Array(count);
    this.dtypes = new Array<ElementType | undefined>(count).fill(undefined);
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
    const w = this.words, o = this.at + slot * SLOT_WORDS;
    const data = t.dataAddress;
    w[o] = data >>> 0;
    w[o + 1] = (data / TWO_32) >>> 0;
    // An op's outputs are new tensors at every call, mostly of the last call's dtype.
    if (this.dtypes[slot] !== t.dtype) {
      this.dtypes[slot] = t.dtype;
      w[o + DTYPE_WORD] = dtypeCode[t.dtype];
      w[o + DTYPE_WORD + 1] = 0;
    }
    this.ids[slot] = t.id;
    this.writeSizes(o, slot, t.shape, t.strides);
    return address;
  }

  /**
   * Writes `t`'s memory into slot `slot` as a 1-D buffer of `bytes` uint8 (a
   * BYTES slot, such as a sequence's reserve); returns the slot's address.
   */
  writeBytes(slot: number, t: Describable, bytes: number): number {
    if (t.disposed) throw new LLTMError("DISPOSED", "a disposed tensor was passed to a native call");
    const w = this.words, o = this.at + slot * SLOT_WORDS;
    const data = t.dataAddress;
    w[o] = data >>> 0;
    w[o + 1] = (data / TWO_32) >>> 0;
    w[o + DTYPE_WORD] = dtypeCode.uint8;
    w[o + DTYPE_WORD + 1] = 0;
    this.dtypes[slot] = "uint8";
    // Not cached by id: the same tensor may be described by its elements elsewhere.
    this.ids[slot] = 0;
    this.writeSizes(o, slot, [bytes], BYTE_STRIDES);
    return this.base + slot * TENSOR_BYTES;
  }

  private writeSizes(o: number, slot: number, shape: readonly number[], strides: readonly number[]): void {
    // Arrays of a view never change, so the same arrays mean the same sizes and strides.
    if (this.shapes[slot] === shape && this.strides[slot] === strides) return;
    this.shapes[slot] = shape;
    this.strides[slot] = strides;
    const w = this.words, n = shape.length;
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
  }
}

/**
 * `count` descriptors in a block of native host memory of their own: the
 * arguments of a typed entry point (lltm_forward, lltm_sequence_forward, ...),
 * which tests of the C ABI pass slot by slot.
 */
export class DescriptorBlock extends Descriptors implements Disposable {
  private freed = false;

  constructor(count: number) {
    const { address, words } = hostBlock(Math.max(1, count) * TENSOR_BYTES, "descriptor block");
    super(words, 0, address, count);
  }

  /** Frees the block. */
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
export function highWord(value: number): number {
  return value >= 0 && value < TWO_32 ? 0 : Math.floor(value / TWO_32);
}

/**
 * Whether the elements two views may touch share bytes: their ranges from
 * the lowest to one past the highest element's byte (conservative for
 * interleaved views of one block, exact otherwise).
 */
export function overlaps(a: Describable, b: Describable, aItemBytes: number, bItemBytes = aItemBytes): boolean {
  const aStart = a.dataAddress, bStart = b.dataAddress;
  return aStart < bStart + extentBytes(b, bItemBytes) && bStart < aStart + extentBytes(a, aItemBytes);
}

function extentBytes(t: Describable, itemBytes: number): number {
  let last = 0;
  for (let d = 0; d < t.shape.length; d++) last += (t.shape[d]! - 1) * t.strides[d]!;
  return (last + 1) * itemBytes;
}
