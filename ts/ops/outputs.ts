/**
 * The outputs an op allocates, shaped by the op table: the op's sizes bound
 * from its input tensors, then its output slots' shape rules evaluated
 * (ts/native/op.ts). The layout is kept for the sizes and dtypes of the last
 * call (calls repeat them, step after step), so that a call computes no
 * layout and its tensors share shape and stride arrays with the last call's,
 * which the native layer then does not describe again.
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
  private readonly firstInput: number;
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
  }

  /** Fresh output tensors on `device` for `tensors`, the op's inputs by slot. */
  allocate(tensors: readonly (Tensor | undefined)[], device: Device): Tensor[] {
    const n = this.sizes, last = this.lastSizes, dtypes = this.lastDTypes;
    this.op.bindSizes(tensors, n);
    let layout = this.layout, same = layout !== undefined;
    for (let i = 0; same && i < n.length; i++) same = n[i] === last[i];
    for (let i = 0; same && i < this.dtypeSlots.length; i++) same = this.dtypeOf(tensors, i) === dtypes[i];
    if (!same) {
      for (let i = 0; i < n.length; i++) last[i] = n[i]!;
      for (let i = 0; i < this.dtypeSlots.length; i++) dtypes[i] = this.dtypeOf(tensors, i);
      layout = this.layout = new GroupLayout(this.slots.map((s) => this.op.shapeOf(s, n, tensors)), dtypes);
    }
    return layout!.allocate(device);
  }

  private dtypeOf(tensors: readonly (Tensor | undefined)[], output: number): DType {
    return (tensors[this.dtypeSlots[output]!] ?? tensors[this.firstInput]!).dtype;
  }
}
