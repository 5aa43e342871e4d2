/**
 * The outputs an op allocates, shaped by the op table: the op's sizes bound
 * from its input tensors, then its output slots' shape rules evaluated
 * (ts/native/op.ts). The layout is kept for the sizes and dtypes of the last
 * call (calls repeat them, step after step), so that a call computes no
 * layout and its tensors share shape and stride arrays with the last call's,
 * which the native layer then does not describe again. It is also kept for
 * the inputs' shape arrays themselves: a view's shape array never changes, so
 * when the inputs the sizes are read from bring the same arrays as last time
 * (the same tensors, or outputs of the same layout), the sizes are not bound
 * again.
 *
 * Each output takes the dtype of one input: the one `dtypeFrom` names, else
 * `x` for an output `d_x` (a gradient has its value's dtype: float32 master
 * weights get float32 gradients), else the op's first input.
 */
import type { Device } from "../device.ts";
import type { DType } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import type { Op } from "../native/index.ts";
import { GroupLayout, type Tensor } from "../tensor/index.ts";

export class Outputs {
  private readonly op: Op;
  /** The output slots, in the order of the tensors allocate returns. */
  private readonly slots: readonly number[];
  /** Per output, the slot whose tensor's dtype it takes. */
  private readonly dtypeSlots: readonly number[];
  /** The distinct slots whose dtypes the outputs take. */
  private readonly dtypeSources: readonly number[];
  /** The slots whose shapes the outputs' shapes depend on (read by the op's sizes or "=slot" rules). */
  private readonly shapeSources: readonly number[];
  private readonly firstInput: number;
  /** Per shape source, the shape array its tensor had when the layout was made. */
  private readonly lastShapes: (readonly number[] | undefined)[];
  /** Per dtype source, the dtype it gave when the layout was made. */
  private readonly lastSourceDTypes: DType[] = [];
  private readonly sizes: number[] = [];
  private readonly lastSizes: number[] = [];
  private readonly lastDTypes: DType[] = [];
  private layout: GroupLayout | undefined;

  constructor(op: Op, outputs: readonly string[], dtypeFrom: Readonly<Record<string, string>> = {}) {
    this.op = op;
    const slots = op.spec.slots;
    this.slots = outputs.map((name) => {
      const i = op.slot(name);
      if (slots[i]!.dims === null) throw new LLTMError("INTERNAL", `${op.spec.entry}: output '${name}' has no shape rule`);
      return i;
    });
    const input = (name: string) => slots.findIndex((s) => s.name === name && s.role === "IN");
    this.firstInput = slots.findIndex((s) => s.role === "IN" && !s.optional && !s.bytes);
    this.dtypeSlots = outputs.map((name) => {
      const named = dtypeFrom[name];
      if (named !== undefined) return op.slot(named);
      const value = name.startsWith("d_") ? input(name.slice(2)) : -1;
      return value >= 0 ? value : this.firstInput;
    });
    this.dtypeSources = [...new Set(this.dtypeSlots)];
    const read = op.spec.sizes.map(([, slot]) => op.slot(slot));
    for (const i of this.slots) if (slots[i]!.same !== null) read.push(op.slot(slots[i]!.same!));
    this.shapeSources = [...new Set(read)];
    this.lastShapes = this.shapeSources.map(() => undefined);
  }

  /** Fresh output tensors on `device` for `tensors`, the op's inputs by slot; a failure names the op's C entry point. */
  allocate(tensors: readonly (Tensor | undefined)[], device: Device): Tensor[] {
    const layout = this.layout, fn = this.op.spec.entry;
    return layout !== undefined && this.sameInputs(tensors) ? layout.allocate(device, fn) : this.relayout(tensors).allocate(device, fn);
  }

  /** Whether `tensors` bring the shape arrays and dtypes the layout was made for. */
  private sameInputs(tensors: readonly (Tensor | undefined)[]): boolean {
    const shapes = this.shapeSources, lastShapes = this.lastShapes;
    for (let i = 0; i < shapes.length; i++) if (tensors[shapes[i]!]?.shape !== lastShapes[i]) return false;
    const sources = this.dtypeSources, lastDTypes = this.lastSourceDTypes;
    for (let i = 0; i < sources.length; i++) {
      if ((tensors[sources[i]!] ?? tensors[this.firstInput]!).dtype !== lastDTypes[i]) return false;
    }
    return true;
  }

  /** The layout for `tensors`' sizes and dtypes (the last one when they are unchanged), remembering their shape arrays. */
  private relayout(tensors: readonly (Tensor | undefined)[]): GroupLayout {
    const n = this.sizes, last = this.lastSizes, dtypes = this.lastDTypes;
    this.op.bindSizes(tensors, n);
    let layout = this.layout, same = layout !== undefined;
    for (let i = 0; same && i < n.length; i++) same = n[i] === last[i];
    for (let i = 0; same && i < this.dtypeSlots.length; i++) same = this.dtypeOf(tensors, i) === dtypes[i];
    if (!same) {
      const outDTypes = this.dtypeSlots.map((_, i) => this.dtypeOf(tensors, i));
      layout = new GroupLayout(this.slots.map((s) => this.op.shapeOf(s, n, tensors)), outDTypes);
      for (let i = 0; i < n.length; i++) last[i] = n[i]!;
      for (let i = 0; i < outDTypes.length; i++) dtypes[i] = outDTypes[i]!;
    }
    for (let i = 0; i < this.shapeSources.length; i++) this.lastShapes[i] = tensors[this.shapeSources[i]!]?.shape;
    for (let i = 0; i < this.dtypeSources.length; i++) {
      this.lastSourceDTypes[i] = (tensors[this.dtypeSources[i]!] ?? tensors[this.firstInput]!).dtype;
    }
    return (this.layout = layout!);
  }

  private dtypeOf(tensors: readonly (Tensor | undefined)[], output: number): DType {
    return (tensors[this.dtypeSlots[output]!] ?? tensors[this.firstInput]!).dtype;
  }
}
