/** Dropout's product with a random mask of kept elements scaled by 1/(1-p). */
import { LLTMError } from "../errors.ts";
import type { Random } from "../random.ts";
import type { Tensor } from "../tensor/index.ts";

export function multiplyByMask(x: Tensor, p: number, rng: Random): Tensor {
  void x, p, rng;
  throw new LLTMError("BACKEND_UNAVAILABLE", "Dropout.forward: dropping in training needs the elementwise mul op, which this build lacks; use eval() or p = 0");
}
