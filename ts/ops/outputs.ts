/**
 * The outputs of one op, laid out for the sizes and dtype of its last call
 * (calls repeat them, step after step), so that a call computes no layout and
 * its tensors share shape and stride arrays with the last call's, which the
 * native layer then does not describe again.
 */
import type { Device } from "../device.ts";
import type { DType } from "../dtype.ts";
import { GroupLayout, type Tensor } from "../tensor.ts";

/** An op's output shapes from up to five sizes (B, F, S for a step; T, B, F, S and one of the op's own for a sequence). */
type Shapes = (a: number, b: number, c: number, d: number, e: number) => number[][];

export class Outputs {
  private readonly sizes = [0, 0, 0, 0, 0];
  private layout: GroupLayout | undefined;
  private readonly shapes: Shapes;

  constructor(shapes: Shapes) {
    this.shapes = shapes;
  }

  /** Fresh output tensors for these sizes on `device`. */
  allocate(dtype: DType, device: Device, a: number, b: number, c: number, d = 0, e = 0): Tensor[] {
    const n = this.sizes;
    let layout = this.layout;
    if (!layout || dtype !== layout.dtype || a !== n[0] || b !== n[1] || c !== n[2] || d !== n[3] || e !== n[4]) {
      layout = this.layout = new GroupLayout(this.shapes(a, b, c, d, e), dtype);
      n[0] = a;
      n[1] = b;
      n[2] = c;
      n[3] = d;
      n[4] = e;
    }
    return layout.allocate(device);
  }
}
