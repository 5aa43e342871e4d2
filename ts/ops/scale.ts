/** scale: x * alpha elementwise (the SCALE op of csrc/lltm_ops.def); its gradient is the incoming one scaled alike. */
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon } from "./lltm.ts";
import { checkFloats, produce } from "./produce.ts";

const SCALE = native.op("SCALE");

/** x * alpha. */
export function scale(x: Tensor, alpha: number): Tensor {
  const fn = "scale";
  checkCommon(fn, ["x"], [x]);
  checkFloats(fn, ["x"], [x]);
  const out = Tensor.empty(x.shape, { dtype: x.dtype, device: x.device });
  return produce(SCALE, fn, [out, x], out, [alpha], 0, { alpha: "'alpha'" });
}
