/**
 * embedding on the tape (the EMBEDDING op): the rows of weight [V, D] named
 * by int32 ids of any shape, as torch.nn.functional.embedding; its backward
 * (EMBEDDING_BACKWARD) adds each row's gradient into the weight's .grad
 * (every repeat of an id adds).
 */
import { LLTMError } from "../../errors.ts";
import { ACCUMULATE_PARAM_GRADS } from "../../native/constants.ts";
import * as native from "../../native/index.ts";
import { checkCommon } from "../../ops/lltm.ts";
import { Tensor } from "../../tensor/index.ts";
import { withGradMode } from "../grad_mode.ts";
import { type BackwardContext, Node } from "../node.ts";
import { needsRecording, recordOne } from "../record.ts";

const EMBEDDING = native.op("EMBEDDING"), BACKWARD = native.op("EMBEDDING_BACKWARD");

class EmbeddingNode extends Node {
  private ids: Tensor | undefined;
  private readonly weightShape: readonly number[];

  constructor(ids: Tensor, weight: Tensor) {
    super("embedding");
    this.ids = ids.retain();
    this.weightShape = weight.shape;
  }

  backward(grads: readonly (Tensor | undefined)[], ctx: BackwardContext): (Tensor | undefined)[] {
    const g = grads[0]!;
    const D = this.weightShape[1]!;
    using rows = g.reshape([g.numel / D, D]);
    const into = ctx.accumulator(1);
    const target = into ?? Tensor.zeros(this.weightShape, { dtype: g.dtype, device: g.device });
    native.run(BACKWARD, "backward (embedding)", [rows, this.ids!, target], ACCUMULATE_PARAM_GRADS);
    return [undefined, into === undefined ? target : undefined];
  }

  protected releaseSaved(): void {
    this.ids?.dispose();
    this.ids = undefined;
  }
}

/** weight's rows named by `ids` (int32, any shape): [...ids.shape, D]; an id outside [0, V) is refused. */
export function embedding(ids: Tensor, weight: Tensor): Tensor {
  const fn = "embedding";
  checkCommon(fn, ["ids", "weight"], [ids, weight]);
  if (ids.dtype !== "int32") throw new LLTMError("INVALID_DTYPE", `${fn}: 'ids' must be int32 token ids, got ${ids.dtype}`);
  if (weight.ndim !== 2) throw new LLTMError("SHAPE_MISMATCH", `${fn}: 'weight' must be [V, D], got [${weight.shape.join(", ")}]`);
  const D = weight.shape[1]!;
  using flat = withGradMode(false, () => ids.reshape([ids.numel]));
  const y = withGradMode(false, () => {
    const out = Tensor.empty([ids.numel, D], { dtype: weight.dtype, device: weight.device });
    try {
      native.run(EMBEDDING, fn, [weight, flat, out]);
    } catch (e) {
      out.dispose();
      throw e;
    }
    if (ids.ndim === 1) return out;
    const shaped = out.reshape([...ids.shape, D]);
    out.dispose();
    return shaped;
  });
  if (!needsRecording([weight])) return y;
  return recordOne(new EmbeddingNode(flat, weight), [ids, weight], y);
}
