/** argmax over the last dimension (the ARGMAX op of csrc/lltm_ops.def): x [..., V] -> int32 indices [...]. */
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon } from "./lltm.ts";
import { produce } from "./produce.ts";
import { rows, unflattenRows } from "./rows.ts";

const ARGMAX = native.op("ARGMAX");

/** The index of each row's largest element (the first of equal ones; a NaN counts as largest), as int32. */
export function argmax(x: Tensor): Tensor {
  const fn = "argmax";
  checkCommon(fn, ["x"], [x]);
  using x2 = rows(x);
  const indices = Tensor.empty([x2.shape[0]!], { dtype: "int32", device: x.device });
  return unflattenRows(produce(ARGMAX, fn, [x2, indices], indices), x.shape);
}
