/**
 * clipGradNorm_, as torch.nn.utils.clip_grad_norm_ (2-norm): the total norm
 * of every gradient taken as one vector, and each gradient scaled in place by
 * min(1, maxNorm / (norm + 1e-6)), all on the device with no host read: the
 * SUM_SQUARES op adds each gradient's squares into one 1-element tensor, the
 * SCALE_BY_NORM op reads it where it lives. The norm comes back as a
 * 1-element tensor, read only when the caller reads it. Gradients that are
 * exactly the parts of a fused optimizer's flat gradient go as that one
 * tensor (tensor/tiling.ts): one launch each way per flat buffer.
 */
import { valueDType } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import { ACCUMULATE_PARAM_GRADS } from "../native/constants.ts";
import * as native from "../native/index.ts";
import { coalesce, Tensor } from "../tensor/index.ts";
import { checkCommon } from "./lltm.ts";
import { produce } from "./produce.ts";

const SUM_SQUARES = native.op("SUM_SQUARES"), SCALE_BY_NORM = native.op("SCALE_BY_NORM");

/**
 * Scales `grads` (the parameters' gradients) in place so that their joint
 * 2-norm is at most maxNorm; returns that norm before clipping, [1], in the
 * gradients' compute type (float32, or float64 for float64 gradients).
 */
export function clipGradNorm_(grads: readonly Tensor[], maxNorm: number): Tensor {
  const fn = "clipGradNorm_";
  if (!Array.isArray(grads) || grads.length === 0) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'parameters' must be a non-empty array of gradient Tensors`);
  }
  checkCommon(fn, grads.map((_, i) => `parameters[${i}]`), grads);
  if (!(typeof maxNorm === "number" && Number.isFinite(maxNorm) && maxNorm >= 0)) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'maxNorm' must be a finite number >= 0, got ${maxNorm}`);
  }
  const dtype = valueDType(grads[0]!.dtype);
  for (let i = 0; i < grads.length; i++) {
    const own = valueDType(grads[i]!.dtype);
    if (own === "int32" || own !== dtype) {
      throw new LLTMError(
        "INVALID_DTYPE",
        `${fn}: 'parameters[${i}]' has dtype ${grads[i]!.dtype} but 'parameters[0]' has ${grads[0]!.dtype}; the gradients must share a float compute type`,
      );
    }
  }
  const device = grads[0]!.device;
  const parts = coalesce(grads);
  const name = (t: Tensor) => {
    const i = grads.indexOf(t);
    return i < 0 ? "'parameters' (a flat buffer of them)" : `'parameters[${i}]'`;
  };
  using totalSq = Tensor.empty([1], { dtype, device });
  for (let i = 0; i < parts.length; i++) {
    native.run(SUM_SQUARES, fn, [parts[i], totalSq], i === 0 ? 0 : ACCUMULATE_PARAM_GRADS, undefined, { x: name(parts[i]!) });
  }
  const norm = Tensor.empty([1], { dtype, device });
  for (let i = 0; i < parts.length; i++) {
    produce(SCALE_BY_NORM, fn, [parts[i], totalSq, i === 0 ? norm : undefined], norm, [maxNorm], 0, { t: name(parts[i]!) });
  }
  return norm;
}
