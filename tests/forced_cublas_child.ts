/**
 * A CUDA step forward in the dtype argv[2] names, reporting which products the backend has (cuBLAS or its own)
 * and whether the step ran or how it was refused (for cuda.test.ts).
 */
import process from "node:process";

import { backendInfo, type DType, LLTMError, lltmForward, Tensor } from "../ts/index.ts";

const dtype = (process.argv[2] ?? "float32") as DType;
const o = { dtype, device: "cuda" } as const;
using x = Tensor.ones([2, 3], o);
using w = Tensor.ones([12, 7], o);
using b = Tensor.ones([12], o);
using h = Tensor.ones([2, 4], o);
using c = Tensor.ones([2, 4], o);
try {
  using out = lltmForward(x, w, b, h, c);
  console.log(`${backendInfo().cudaBlas} ran ${out.newH.dtype}`);
} catch (e) {
  if (!(e instanceof LLTMError)) throw e;
  console.log(`${backendInfo().cudaBlas} refused ${e.code} ${e.message}`);
}
