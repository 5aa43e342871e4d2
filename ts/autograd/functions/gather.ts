/**
 * gather (ops/gather.ts) on the tape: its backward adds the gradient into
 * the positions the index names, straight into the input's .grad when it is
 * a leaf (repeats adding up). The index gets no gradient.
 */
import { gather as gatherOp, gatherBackward } from "../../ops/gather.ts";
import type { Tensor } from "../../tensor/index.ts";
import { withGradMode } from "../grad_mode.ts";
import { type BackwardContext, Node } from "../node.ts";
import { needsRecording, recordOne } from "../record.ts";

class GatherNode extends Node {
  private index: Tensor | undefined;
  private readonly inputShape: readonly number[];
  private readonly dim: number;

  constructor(input: Tensor, dim: number, index: Tensor) {
    super("gather");
    this.dim = dim;
    this.index = index.retain();
    this.inputShape = [...input.shape];
  }

  backward(grads: readonly (Tensor | undefined)[], ctx: BackwardContext): (Tensor | undefined)[] {
    const into = ctx.accumulator(0);
    if (into === undefined) return [gatherBackward(grads[0]!, this.dim, this.index!, this.inputShape), undefined];
    gatherBackward(grads[0]!, this.dim, this.index!, this.inputShape, { dInput: into }).dispose();
    return [undefined, undefined];
  }

  protected releaseSaved(): void {
    this.index?.dispose();
    this.index = undefined;
  }
}

/** input gathered along `dim` at index (int32, input's rank and sizes but at dim), as torch.gather. */
export function gather(input: Tensor, dim: number, index: Tensor): Tensor {
  const out = withGradMode(false, () => gatherOp(input, dim, index));
  return needsRecording([input]) ? recordOne(new GatherNode(input, dim, index), [input, index], out) : out;
}
