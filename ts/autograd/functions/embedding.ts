/**
 * embedding (ops/embedding.ts) on the tape: weight [V, D] gathered at int32
 * ids of any shape; its backward adds each row's gradient straight into the
 * weight's .grad when it is a leaf (every repeat of an id adds).
 */
import { embedding as embeddingOp, embeddingBackward } from "../../ops/embedding.ts";
import type { Tensor } from "../../tensor/index.ts";
import { withGradMode } from "../grad_mode.ts";
import { type BackwardContext, Node } from "../node.ts";
import { needsRecording, recordOne } from "../record.ts";

class EmbeddingNode extends Node {
  private ids: Tensor | undefined;
  private readonly rows: number;

  constructor(weight: Tensor, ids: Tensor) {
    super("embedding");
    this.ids = ids.retain();
    this.rows = weight.shape[0]!;
  }

  backward(grads: readonly (Tensor | undefined)[], ctx: BackwardContext): (Tensor | undefined)[] {
    const into = ctx.accumulator(0);
    if (into === undefined) return [embeddingBackward(grads[0]!, this.ids!, this.rows), undefined];
    embeddingBackward(grads[0]!, this.ids!, this.rows, { dWeight: into }).dispose();
    return [undefined, undefined];
  }

  protected releaseSaved(): void {
    this.ids?.dispose();
    this.ids = undefined;
  }
}

/** weight [V, D] gathered at ids (int32, any shape) -> [...ids.shape, D], as torch.nn.functional.embedding. */
export function embedding(weight: Tensor, ids: Tensor): Tensor {
  const y = withGradMode(false, () => embeddingOp(weight, ids));
  return needsRecording([weight]) ? recordOne(new EmbeddingNode(weight, ids), [weight, ids], y) : y;
}
