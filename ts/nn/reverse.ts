/**
 * A sequence reversed in time, on the tape, for the second direction of a
 * bidirectional LLTM: T copies of a step, as strides cannot be negative.
 */
import { withGradMode } from "../autograd/grad_mode.ts";
import { Node } from "../autograd/node.ts";
import { needsRecording, recordOne } from "../autograd/record.ts";
import { Tensor } from "../tensor/index.ts";

/** x [T, ...] with its steps in reverse order (a new tensor). */
function flip(x: Tensor): Tensor {
  const out = Tensor.empty(x.shape, { dtype: x.dtype, device: x.device });
  const T = x.shape[0]!;
  for (let t = 0; t < T; t++) {
    using from = x.narrow(0, t, 1);
    using to = out.narrow(0, T - 1 - t, 1);
    to.copyFrom(from);
  }
  return out;
}

class FlipNode extends Node {
  constructor() {
    super("LLTM.forward (reversed sequence)");
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    return [flip(grads[0]!)];
  }

  protected releaseSaved(): void {}
}

/** x [T, ...] reversed in time, on the tape. */
export function reverseTime(x: Tensor): Tensor {
  const out = withGradMode(false, () => flip(x));
  return needsRecording([x]) ? recordOne(new FlipNode(), [x], out) : out;
}
