/**
 * cat, as torch.cat of two tensors along `dim` (the CAT op of
 * csrc/lltm_ops.def, which joins [O, P, I] and [O, Q, I]: the dimensions
 * before `dim` flattened to O, those after it to I), float or int32 alike;
 * more tensors by repeated use. Its backward is two narrow views of the
 * gradient.
 */
import { LLTMError } from "../errors.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { aroundDim, checkedDim } from "./along_dim.ts";
import { checkCommon } from "./lltm.ts";
import { produce, resultDType } from "./produce.ts";

const CAT = native.op("CAT");

/** a and b joined along `dim` (default 0; negative counts from the end); their other sizes must agree. */
export function cat(a: Tensor, b: Tensor, dim = 0): Tensor {
  const fn = "cat";
  checkCommon(fn, ["a", "b"], [a, b]);
  const d = checkedDim(fn, dim, a.ndim);
  if (b.ndim !== a.ndim || a.shape.some((n, i) => i !== d && n !== b.shape[i])) {
    throw new LLTMError(
      "SHAPE_MISMATCH",
      `${fn}: 'b' has shape [${b.shape.join(", ")}] but 'a' has [${a.shape.join(", ")}]; all but dimension ${d} must agree`,
    );
  }
  const shape = [...a.shape];
  shape[d] = a.shape[d]! + b.shape[d]!;
  using a3 = a.reshape(aroundDim(a.shape, d));
  using b3 = b.reshape(aroundDim(b.shape, d));
  const dtype = a.dtype === "int32" || b.dtype === "int32" ? a.dtype : resultDType(a, b);
  const out = Tensor.empty(shape, { dtype, device: a.device });
  using out3 = out.reshape(aroundDim(out.shape, d));
  return produce(CAT, fn, [a3, b3, out3], out);
}
