/**
 * stack: tensors of one shape as slices of a new leading dimension (as
 * torch.stack along dimension 0), copied in; its backward hands each input
 * its slice of the gradient, a view.
 */
import { LLTMError } from "../../errors.ts";
import { sameShape, Tensor } from "../../tensor/index.ts";
import { withGradMode } from "../grad_mode.ts";
import { Node } from "../node.ts";
import { needsRecording, recordOne } from "../record.ts";

class StackNode extends Node {
  private readonly count: number;

  constructor(count: number) {
    super("stack");
    this.count = count;
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    const g = grads[0]!;
    const shape = g.shape.slice(1);
    return Array.from({ length: this.count }, (_, i) => {
      if (!this.needs(i)) return undefined;
      using slice = g.narrow(0, i, 1);
      return slice.reshape(shape);
    });
  }

  protected releaseSaved(): void {}
}

/** [n, ...shape] from n tensors of `shape` (one dtype and device). */
export function stack(tensors: readonly Tensor[]): Tensor {
  const fn = "stack";
  if (tensors.length === 0) throw new LLTMError("INVALID_ARGUMENT", `${fn}: no tensors to stack`);
  const first = tensors[0]!;
  tensors.forEach((t, i) => {
    t.assertLive(`${fn}: tensor ${i}`);
    if (!sameShape(t.shape, first.shape)) {
      throw new LLTMError("SHAPE_MISMATCH", `${fn}: tensor ${i} has shape [${t.shape.join(", ")}], tensor 0 [${first.shape.join(", ")}]`);
    }
  });
  const out = withGradMode(false, () => {
    const o = Tensor.empty([tensors.length, ...first.shape], { dtype: first.dtype, device: first.device });
    tensors.forEach((t, i) => {
      using slice = o.narrow(0, i, 1);
      using view = slice.reshape(first.shape);
      view.copyFrom(t);
    });
    return o;
  });
  if (!needsRecording(tensors)) return out;
  return recordOne(new StackNode(tensors.length), tensors, out);
}
