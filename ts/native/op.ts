/**
 * The ops of csrc/lltm_ops.def as TypeScript reads them (from
 * ts/native/abi.generated.ts): slots by name, and the shapes of an op's
 * output slots from its inputs (its sizes bound from the slots the table
 * names, then the outputs' shape rules evaluated), so that an op file names
 * slots and the table says the rest.
 */
import { LLTMError } from "../errors.ts";
import { opTable } from "./constants.ts";

export type OpName = keyof typeof opTable;

export interface SlotSpec {
  readonly name: string;
  readonly role: "IN" | "OUT" | "INOUT" | "ACC";
  readonly optional: boolean;
  readonly contiguous: boolean;
  readonly bytes: boolean;
  readonly sameView: boolean;
  /** Holds int32 indices (INDEX). */
  readonly index: boolean;
  /** Holds a float or an int32 tensor (ANY_TYPE). */
  readonly anyType: boolean;
  /** The shape as the table writes it, e.g. "[3S, S+F]". */
  readonly shape: string;
  /** Per dimension, the [coefficient, size] terms summed ("" for a constant). */
  readonly dims: readonly (readonly (readonly [number, string])[])[] | null;
  /** The slot whose sizes this one has ("=param"). */
  readonly same: string | null;
}

export interface ScalarSpec {
  readonly name: string;
  readonly kind: "ANY" | "CLOSED" | "HALF_OPEN" | "INTEGER";
  readonly lo: number;
  readonly hi: number;
}

export interface OpSpec {
  readonly code: number;
  readonly entry: string;
  readonly flags: number;
  /** [size, slot, dimension, size subtracted or ""]. */
  readonly sizes: readonly (readonly [string, string, number, string])[];
  readonly slots: readonly SlotSpec[];
  readonly scalars: readonly ScalarSpec[];
}

const specs: Readonly<Record<OpName, OpSpec>> = opTable;

/** A tensor as far as shapes go. */
interface Shaped {
  readonly shape: readonly number[];
}

/** One op of the table, with its size and shape rules compiled to slot and size indices. */
export class Op {
  readonly name: OpName;
  readonly code: number;
  readonly spec: OpSpec;
  /** Per slot, whether it is a BYTES slot (described as a buffer of bytes). */
  readonly byteSlots: readonly boolean[];
  /** The slot whose tensor lives on the call's src device (LLTM_OP_COPY's src), or -1. */
  readonly srcSlot: number;
  /** Per size, in the table's order, three entries: the slot and dimension it is read from, and the size it is solved against (-1: none). */
  private readonly sizeRules: Int32Array;

  constructor(name: OpName) {
    this.name = name;
    this.spec = specs[name];
    this.code = this.spec.code;
    this.byteSlots = this.spec.slots.map((s) => s.bytes);
    this.srcSlot = name === "COPY" ? this.slot("src") : -1;
    const order = this.spec.sizes.map(([size]) => size);
    this.sizeRules = Int32Array.from(this.spec.sizes.flatMap(([, slot, dim, minus]) => [this.slot(slot), dim, minus === "" ? -1 : order.indexOf(minus)]));
  }

  /** The index of slot `name`. */
  slot(name: string): number {
    const i = this.spec.slots.findIndex((s) => s.name === name);
    if (i < 0) throw new LLTMError("INTERNAL", `op ${this.name} has no slot '${name}'`);
    return i;
  }

  /**
   * The op's sizes, in the table's order, read from `tensors` (by slot) into
   * `out` without checking them: where a slot is absent or its rank is short,
   * 1 stands in (and a solved size is at least 1), and the library refuses the
   * call, naming the argument, before anything is written.
   */
  bindSizes(tensors: readonly (Shaped | undefined)[], out: number[]): void {
    const rules = this.sizeRules;
    for (let i = 0, r = 0; r < rules.length; i++, r += 3) {
      const size = tensors[rules[r]!]?.shape[rules[r + 1]!] ?? 1, minus = rules[r + 2]!;
      out[i] = minus < 0 ? size : Math.max(1, size - out[minus]!);
    }
  }

  /** The shape of slot `slot` for sizes bound by bindSizes (and, for "=slot" rules, the tensors by slot). */
  shapeOf(slot: number, sizes: readonly number[], tensors: readonly (Shaped | undefined)[]): number[] {
    const s = this.spec.slots[slot]!;
    if (s.same !== null) return [...(tensors[this.slot(s.same)]?.shape ?? [1])];
    if (s.dims === null) throw new LLTMError("INTERNAL", `${this.spec.entry}: slot '${s.name}' has no shape rule (${s.shape})`);
    const order = this.spec.sizes;
    return s.dims.map((terms) => {
      let n = 0;
      for (const [k, size] of terms) n += size === "" ? k : k * sizes[order.findIndex(([name]) => name === size)]!;
      return n;
    });
  }
}

const ops = new Map<OpName, Op>();

/** The op named `name` (one instance per op). */
export function op(name: OpName): Op {
  let o = ops.get(name);
  if (!o) ops.set(name, (o = new Op(name)));
  return o;
}
