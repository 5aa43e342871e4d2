/**
 * softmax over the last dimension (the SOFTMAX op of csrc/lltm_ops.def, the
 * row's maximum subtracted first) of x [..., V]; and its backward from the
 * output (SOFTMAX_BACKWARD): d_x = y * (grad_y - sum(grad_y * y)).
 */
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon } from "./lltm.ts";
import { produce } from "./produce.ts";
import { rows, unflatten } from "./rows.ts";

const SOFTMAX = native.op("SOFTMAX"), BACKWARD = native.op("SOFTMAX_BACKWARD");

/** softmax(x) over the last dimension, of x's shape. */
export function softmax(x: Tensor): Tensor {
  const fn = "softmax";
  checkCommon(fn, ["x"], [x]);
  using x2 = rows(x);
  const y = Tensor.empty(x2.shape, { dtype: x.dtype, device: x.device });
  return unflatten(produce(SOFTMAX, fn, [x2, y], y), x.shape);
}

/** The gradient of softmax from its output y and gradY (both [..., V]). */
export function softmaxBackward(gradY: Tensor, y: Tensor): Tensor {
  const fn = "softmaxBackward";
  checkCommon(fn, ["gradY", "y"], [gradY, y]);
  using y2 = rows(y);
  using g2 = rows(gradY);
  const dX = Tensor.empty(y2.shape, { dtype: y.dtype, device: y.device });
  return unflatten(produce(BACKWARD, fn, [y2, g2, dX], dX), y.shape);
}
