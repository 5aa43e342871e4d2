/**
 * embedding, as torch.nn.functional.embedding (the EMBEDDING op of
 * csrc/lltm_ops.def): the rows of weight [V, D] named by int32 ids of any
 * shape, -> [...ids, D]; an id outside [0, V) is refused, naming its
 * position, before anything is written. Its backward (EMBEDDING_BACKWARD)
 * adds each row of the gradient into the row of dWeight its id names.
 */
import { LLTMError } from "../errors.ts";
import { ACCUMULATE_PARAM_GRADS } from "../native/constants.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon } from "./lltm.ts";
import { produce } from "./produce.ts";

const EMBEDDING = native.op("EMBEDDING"), BACKWARD = native.op("EMBEDDING_BACKWARD");

/** ids of any shape as the [N] the op takes. */
function flat(ids: Tensor): Tensor {
  return ids.ndim === 1 ? ids.retain() : ids.reshape([ids.numel]);
}

/** weight [V, D] gathered at ids (int32, any shape) -> [...ids.shape, D]. */
export function embedding(weight: Tensor, ids: Tensor): Tensor {
  const fn = "embedding";
  checkCommon(fn, ["weight", "ids"], [weight, ids]);
  using ids1 = flat(ids);
  const D = weight.ndim === 2 ? weight.shape[1]! : 1;
  const y = Tensor.empty([ids1.shape[0]!, D], { dtype: weight.dtype, device: weight.device });
  produce(EMBEDDING, fn, [weight, ids1, y], y);
  if (ids.ndim === 1) return y;
  const shaped = y.reshape([...ids.shape, D]);
  y.dispose();
  return shaped;
}

/**
 * The gradient of embedding for weight [V, D] from gradY ([...ids.shape, D])
 * and ids: a new [V, D] tensor (rows no id names are 0), or, with `dWeight`,
 * added into it (as autograd accumulates .grad), which is then returned.
 */
export function embeddingBackward(
  gradY: Tensor, ids: Tensor, numEmbeddings: number, options: { dWeight?: Tensor } = {},
): Tensor {
  const fn = "embeddingBackward";
  const into = options.dWeight;
  checkCommon(fn, into ? ["gradY", "ids", "dWeight"] : ["gradY", "ids"], into ? [gradY, ids, into] : [gradY, ids]);
  if (!Number.isSafeInteger(numEmbeddings) || numEmbeddings < 1) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'numEmbeddings' must be a positive integer, got ${numEmbeddings}`);
  }
  using ids1 = flat(ids);
  const D = gradY.shape[gradY.ndim - 1]!;
  using g2 = gradY.ndim === 2 ? gradY.retain() : gradY.reshape([gradY.numel / D, D]);
  if (into !== undefined) {
    native.run(BACKWARD, fn, [g2, ids1, into], ACCUMULATE_PARAM_GRADS);
    return into.retain();
  }
  const dWeight = Tensor.empty([numEmbeddings, D], { dtype: gradY.dtype, device: gradY.device });
  return produce(BACKWARD, fn, [g2, ids1, dWeight], dWeight);
}
