/**
 * linear on the tape: y = x Wᵀ + bias (ops/linear.ts), recorded when an input
 * requires gradients; its backward is one LINEAR_BACKWARD call that adds the
 * weight's and bias' gradients straight into their .grad when they are leaves.
 */
import { linear as linearOp, linearBackward } from "../../ops/linear.ts";
import type { Tensor } from "../../tensor/index.ts";
import { withGradMode } from "../grad_mode.ts";
import { type BackwardContext, Node } from "../node.ts";
import { needsRecording, recordOne } from "../record.ts";

class LinearNode extends Node {
  private saved: { x: Tensor; weight: Tensor } | undefined;

  constructor(x: Tensor, weight: Tensor) {
    super("linear");
    this.saved = { x: x.retain(), weight: weight.retain() };
  }

  backward(grads: readonly (Tensor | undefined)[], ctx: BackwardContext): (Tensor | undefined)[] {
    const { x, weight } = this.saved!;
    const gradY = grads[0]!;
    const intoWeight = this.needs(1) ? ctx.accumulator(1) : undefined;
    const intoBias = this.needs(2) ? ctx.accumulator(2) : undefined;
    const g = linearBackward(gradY, x, weight, {
      needX: this.needs(0),
      needWeight: this.needs(1),
      needBias: this.needs(2),
      dWeight: intoWeight,
      dBias: intoBias,
    });
    return [g.dX, g.dWeight, g.dBias];
  }

  protected releaseSaved(): void {
    this.saved?.x.dispose();
    this.saved?.weight.dispose();
    this.saved = undefined;
  }
}

/** y = x Wᵀ + bias: x [..., K], weight [M, K], bias [M] (optional) -> y [..., M], as torch.nn.functional.linear. */
export function linear(x: Tensor, weight: Tensor, bias?: Tensor): Tensor {
  const inputs = [x, weight, bias];
  if (!needsRecording(inputs)) return linearOp(x, weight, bias);
  const y = withGradMode(false, () => linearOp(x, weight, bias));
  return recordOne(new LinearNode(x, weight), inputs, y);
}
