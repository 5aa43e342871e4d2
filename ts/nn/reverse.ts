/**
 * A sequence reversed in time, on the tape, for the second direction of a
 * bidirectional LLTM: each sample reversed within its own length (all T
 * without lengths; as PyTorch's packed sequences are), its steps past its
 * length left in place, by one gather of rows (the embedding op) rather than
 * a copy per step, as strides cannot be negative. The reversal is its own
 * inverse, so its backward is itself.
 */
import { withGradMode } from "../autograd/grad_mode.ts";
import { Node } from "../autograd/node.ts";
import { needsRecording, recordOne } from "../autograd/record.ts";
import { embedding } from "../ops/embedding.ts";
import { Tensor } from "../tensor/index.ts";

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

class ReverseNode extends Node {
  private reversal: SampleReversal | undefined;

  constructor(reversal: SampleReversal) {
    super("LLTM.forward (reversed sequence)");
    this.reversal = reversal;
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    return [this.reversal!.apply(grads[0]!)];
  }

  protected releaseSaved(): void {
    this.reversal?.dispose();
    this.reversal = undefined;
  }
}

/** x [T, B, X] with each sample reversed as `reversal` says, on the tape (its node keeps its own reference to the rows). */
export function reverseTime(x: Tensor, reversal: SampleReversal): Tensor {
  const out = withGradMode(false, () => reversal.apply(x));
  return needsRecording([x]) ? recordOne(new ReverseNode(reversal.retain()), [x], out) : out;
}
