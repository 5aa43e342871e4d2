/**
 * A sequence reversed in time, on the tape, for the second direction of a
 * bidirectional LLTM run layer by layer: each sample reversed within its own
 * length (all T without lengths; as PyTorch's packed sequences are), its
 * steps past its length left in place, by the REVERSE_STEPS op (reverseSteps),
 * as the stacked ops reverse it. The reversal is its own inverse, so its
 * backward is itself.
 */
import { withGradMode } from "../autograd/grad_mode.ts";
import { Node } from "../autograd/node.ts";
import { needsRecording, recordOne } from "../autograd/record.ts";
import { reverseSteps } from "../ops/reverse_steps.ts";
import { Tensor } from "../tensor/index.ts";

class ReverseNode extends Node {
  private lengths: Tensor | undefined;

  constructor(lengths: Tensor | undefined) {
    super("LLTM.forward (reversed sequence)");
    this.lengths = lengths;
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    return [reverseSteps(grads[0]!, this.lengths)];
  }

  protected releaseSaved(): void {
    this.lengths?.dispose();
    this.lengths = undefined;
  }
}

/** x [T, B, X] with each sample's first lengths[b] steps (int32 [B]; default all T) reversed, on the tape. */
export function reverseTime(x: Tensor, lengths?: Tensor): Tensor {
  const out = withGradMode(false, () => reverseSteps(x, lengths));
  return needsRecording([x]) ? recordOne(new ReverseNode(lengths?.retain()), [x], out) : out;
}
