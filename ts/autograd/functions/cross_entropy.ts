/**
 * crossEntropy (ops/cross_entropy.ts, the log-softmax fused) on the tape:
 * logits [..., V] against int32 targets [...]; its backward is one
 * CROSS_ENTROPY_BACKWARD call.
 */
import { crossEntropy as crossEntropyOp, crossEntropyBackward, type CrossEntropyOptions } from "../../ops/cross_entropy.ts";
import type { Tensor } from "../../tensor/index.ts";
import { withGradMode } from "../grad_mode.ts";
import { Node } from "../node.ts";
import { needsRecording, recordOne } from "../record.ts";

class CrossEntropyNode extends Node {
  private saved: { logits: Tensor; targets: Tensor } | undefined;
  private readonly options: CrossEntropyOptions;

  constructor(logits: Tensor, targets: Tensor, options: CrossEntropyOptions) {
    super("crossEntropy");
    this.saved = { logits: logits.retain(), targets: targets.retain() };
    this.options = { ...options };
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    const { logits, targets } = this.saved!;
    return [crossEntropyBackward(grads[0]!, logits, targets, this.options), undefined];
  }

  protected releaseSaved(): void {
    this.saved?.logits.dispose();
    this.saved?.targets.dispose();
    this.saved = undefined;
  }
}

/**
 * The softmax cross-entropy of logits [..., V] against int32 class targets [...], as
 * torch.nn.functional.cross_entropy: [1] for "mean" (the default) and "sum", targets' shape for "none".
 */
export function crossEntropy(logits: Tensor, targets: Tensor, options: CrossEntropyOptions = {}): Tensor {
  const loss = withGradMode(false, () => crossEntropyOp(logits, targets, options));
  return needsRecording([logits]) ? recordOne(new CrossEntropyNode(logits, targets, options), [logits, targets], loss) : loss;
}
