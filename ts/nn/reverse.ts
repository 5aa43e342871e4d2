/**
 * The layout moves of a bidirectional LLTM, on the tape: a sequence reversed
 * in time (T copies of a step, as strides cannot be negative) and two
 * directions' outputs joined along the features.
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

class ConcatNode extends Node {
  private readonly widths: readonly number[];

  constructor(widths: readonly number[]) {
    super("LLTM.forward (both directions)");
    this.widths = widths;
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    const g = grads[0]!;
    const last = g.ndim - 1;
    let start = 0;
    return this.widths.map((w, i) => {
      const slice = this.needs(i) ? g.narrow(last, start, w) : undefined;
      start += w;
      return slice;
    });
  }

  protected releaseSaved(): void {}
}

/** a [..., Sa] and b [..., Sb] side by side: [..., Sa + Sb], on the tape. */
export function concatFeatures(a: Tensor, b: Tensor): Tensor {
  const last = a.ndim - 1;
  const widths = [a.shape[last]!, b.shape[last]!];
  const out = withGradMode(false, () => {
    const o = Tensor.empty([...a.shape.slice(0, last), widths[0]! + widths[1]!], { dtype: a.dtype, device: a.device });
    using left = o.narrow(last, 0, widths[0]!);
    using right = o.narrow(last, widths[0]!, widths[1]!);
    left.copyFrom(a);
    right.copyFrom(b);
    return o;
  });
  return needsRecording([a, b]) ? recordOne(new ConcatNode(widths), [a, b], out) : out;
}
