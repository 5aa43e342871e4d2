/**
 * reverseSteps: each sample's steps of a [T, B, X] sequence reversed within
 * its own length (the REVERSE_STEPS op of csrc/lltm_ops.def), as the second
 * direction of a bidirectional stack reads its input; steps past a sample's
 * length stay where they are. Its own inverse.
 */
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon, runInto } from "./lltm.ts";

const REVERSE_STEPS = native.op("REVERSE_STEPS");

/** x [T, B, X] with sample b's first lengths[b] steps (int32 [B], each from 1 to T; default all T) in reverse order. */
export function reverseSteps(x: Tensor, lengths?: Tensor): Tensor {
  const fn = "reverseSteps";
  checkCommon(fn, lengths ? ["x", "lengths"] : ["x"], lengths ? [x, lengths] : [x]);
  const y = Tensor.empty(x.shape, { dtype: x.dtype, device: x.device });
  runInto(REVERSE_STEPS, fn, [x, lengths], [y]);
  return y;
}
