/**
 * crossEntropy on the tape (the CROSS_ENTROPY op, log-softmax fused), as
 * torch.nn.functional.cross_entropy over logits [N, V] and int32 class
 * targets [N]; its backward is one CROSS_ENTROPY_BACKWARD call.
 */
import { LLTMError } from "../../errors.ts";
import * as native from "../../native/index.ts";
import { checkCommon } from "../../ops/lltm.ts";
import { Tensor } from "../../tensor/index.ts";
import { withGradMode } from "../grad_mode.ts";
import { Node } from "../node.ts";
import { needsRecording, recordOne } from "../record.ts";

const FORWARD = native.op("CROSS_ENTROPY"), BACKWARD = native.op("CROSS_ENTROPY_BACKWARD");

/** How the rows' losses are combined, by the op's reduction code. */
const reductions = { none: 0, mean: 1, sum: 2 } as const;
export type Reduction = keyof typeof reductions;

export interface CrossEntropyOptions {
  /** "mean" (default, over the rows not ignored), "sum", or "none" (each row's loss, [N]). */
  reduction?: Reduction;
  /** Rows whose target is this contribute nothing (default -100, as PyTorch). */
  ignoreIndex?: number;
}

class CrossEntropyNode extends Node {
  private saved: { logits: Tensor; targets: Tensor } | undefined;
  private readonly scalars: readonly number[];

  constructor(logits: Tensor, targets: Tensor, scalars: readonly number[]) {
    super("crossEntropy");
    this.saved = { logits: logits.retain(), targets: targets.retain() };
    this.scalars = scalars;
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    const { logits, targets } = this.saved!;
    const g = grads[0]!;
    const perRow = this.scalars[0] === reductions.none;
    const d = Tensor.empty(logits.shape, { dtype: logits.dtype, device: logits.device });
    try {
      native.run(BACKWARD, "backward (crossEntropy)", [logits, targets, perRow ? g : undefined, perRow ? undefined : g, d], 0, this.scalars);
    } catch (e) {
      d.dispose();
      throw e;
    }
    return [d];
  }

  protected releaseSaved(): void {
    this.saved?.logits.dispose();
    this.saved?.targets.dispose();
    this.saved = undefined;
  }
}

/** The softmax cross-entropy of logits [N, V] against targets int32 [N]: [1] ("mean", "sum") or [N] ("none"). */
export function crossEntropy(logits: Tensor, targets: Tensor, options: CrossEntropyOptions = {}): Tensor {
  const fn = "crossEntropy";
  checkCommon(fn, ["logits", "targets"], [logits, targets]);
  const reduction = options.reduction ?? "mean";
  if (!Object.hasOwn(reductions, reduction)) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'reduction' must be "mean", "sum" or "none", got ${JSON.stringify(reduction)}`);
  }
  if (logits.ndim !== 2) {
    throw new LLTMError("SHAPE_MISMATCH", `${fn}: 'logits' must be [N, V], got [${logits.shape.join(", ")}] (reshape a sequence's logits to [T·B, V])`);
  }
  if (targets.dtype !== "int32") throw new LLTMError("INVALID_DTYPE", `${fn}: 'targets' must be int32 class indices, got ${targets.dtype}`);
  const scalars = [reductions[reduction], options.ignoreIndex ?? -100];
  const perRow = reduction === "none";
  const out = withGradMode(false, () => {
    const o = Tensor.empty(perRow ? [logits.shape[0]!] : [1], { dtype: logits.dtype, device: logits.device });
    try {
      native.run(FORWARD, fn, [logits, targets, perRow ? o : undefined, perRow ? undefined : o], 0, scalars);
    } catch (e) {
      o.dispose();
      throw e;
    }
    return o;
  });
  if (!needsRecording([logits])) return out;
  return recordOne(new CrossEntropyNode(logits, targets, scalars), [logits, targets], out);
}
