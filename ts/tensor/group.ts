/**
 * Contiguous tensors of given shapes and dtypes in one block of memory, each
 * 64-byte aligned: the outputs of an op, made with one allocation. The layout
 * is computed once; the tensors of every block share its shape and stride
 * arrays (views never change them), so the native layer sees the same arrays
 * again and rewrites only the data address of a descriptor.
 */
import type { Device } from "../device.ts";
import { type DType, itemSize } from "../dtype.ts";
import { Storage } from "../storage.ts";
import { contiguousStrides, numelOf, tooLarge } from "./shape.ts";
import { Tensor } from "./tensor.ts";

const ALIGN = 64;

export class GroupLayout {
  readonly dtypes: readonly DType[];
  private readonly shapes: readonly (readonly number[])[];
  private readonly strides: readonly (readonly number[])[];
  /** Each tensor's offset in its dtype's elements. */
  private readonly offsets: readonly number[];
  private readonly bytes: number;

  constructor(shapes: readonly (readonly number[])[], dtypes: readonly DType[]) {
    const offsets: number[] = [];
    let total = 0;
    shapes.forEach((shape, i) => {
      const dtype = dtypes[i]!, size = itemSize(dtype), n = numelOf(shape);
      if (n * size > Number.MAX_SAFE_INTEGER) throw tooLarge("outputs", n, dtype);
      offsets.push(total / size);
      total += Math.ceil((n * size) / ALIGN) * ALIGN;
      if (total > Number.MAX_SAFE_INTEGER) throw tooLarge("outputs", n, dtype);
    });
    this.dtypes = [...dtypes];
    this.shapes = shapes.map((s) => [...s]);
    this.strides = this.shapes.map(contiguousStrides);
    this.offsets = offsets;
    this.bytes = total;
  }

  /** A new block on `device` and its tensors, in the order of the shapes; `fn` is named in a failure. */
  allocate(device: Device, fn: string): Tensor[] {
    const n = this.offsets.length;
    const storage = Storage.allocate(this.bytes, device, fn, n);
    const out = new Array<Tensor>(n);
    for (let i = 0; i < n; i++) out[i] = new Tensor(storage, this.dtypes[i]!, this.shapes[i]!, this.strides[i]!, this.offsets[i]);
    return out;
  }
}
