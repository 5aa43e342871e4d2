/**
 * A sequence reversed in time, on the tape, for the second direction of a
 * bidirectional LLTM: T copies of a step, as strides cannot be negative; with
 * per-sample lengths, each sample reversed within its own length (as
 * PyTorch's packed sequences are) by one gather of rows, the steps past its
 * length left in place. Either is its own inverse, so its backward is itself.
 */
import { withGradMode } from "../autograd/grad_mode.ts";
import { Node } from "../autograd/node.ts";
import { needsRecording, recordOne } from "../autograd/record.ts";
import { embedding } from "../ops/embedding.ts";
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

/**
 * The rows of a [T, B] sequence, as int32 indices into its [T*B] rows, that
 * reverse each sample b within its first lengths[b] steps.
 */
export class SampleReversal {
  private readonly rows: Tensor;

  private constructor(rows: Tensor) {
    this.rows = rows;
  }

  static of(lengths: ArrayLike<number>, T: number, device: Tensor["device"]): SampleReversal {
    const B = lengths.length;
    const rows = new Int32Array(T * B);
    for (let t = 0; t < T; t++) {
      for (let b = 0; b < B; b++) {
        const n = lengths[b]!;
        rows[t * B + b] = (t < n ? n - 1 - t : t) * B + b;
      }
    }
    return new SampleReversal(Tensor.fromTypedArray(rows, [T * B], { dtype: "int32", device }));
  }

  /** Another reference to the same rows, disposed on its own. */
  retain(): SampleReversal {
    return new SampleReversal(this.rows.retain());
  }

  /** x [T, B, X] with its rows gathered (a new tensor). */
  apply(x: Tensor): Tensor {
    const [T, B, X] = x.shape as [number, number, number];
    using flat = x.reshape([T * B, X]);
    using gathered = embedding(flat, this.rows);
    return gathered.reshape([T, B, X]);
  }

  dispose(): void {
    this.rows.dispose();
  }
}

class FlipNode extends Node {
  private reversal: SampleReversal | undefined;

  constructor(reversal: SampleReversal | undefined) {
    super("LLTM.forward (reversed sequence)");
    this.reversal = reversal;
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    return [this.reversal !== undefined ? this.reversal.apply(grads[0]!) : flip(grads[0]!)];
  }

  protected releaseSaved(): void {
    this.reversal?.dispose();
    this.reversal = undefined;
  }
}

/**
 * x [T, ...] reversed in time, on the tape; with `reversal`, x [T, B, X] with each sample reversed
 * within its own length (the node keeps its own reference to the reversal's rows).
 */
export function reverseTime(x: Tensor, reversal?: SampleReversal): Tensor {
  const out = withGradMode(false, () => (reversal !== undefined ? reversal.apply(x) : flip(x)));
  if (!needsRecording([x])) return out;
  return recordOne(new FlipNode(reversal?.retain()), [x], out);
}
