/** Dropout's product with a random mask: kept elements scaled by 1/(1-p), drawn on the host, multiplied in on the device. */
import { mul } from "../autograd/functions/elementwise.ts";
import { withGradMode } from "../autograd/grad_mode.ts";
import { valueArray } from "../dtype.ts";
import type { Random } from "../random.ts";
import { Tensor } from "../tensor/index.ts";

export function multiplyByMask(x: Tensor, p: number, rng: Random): Tensor {
  const keep = 1 / (1 - p);
  const values = valueArray(x.dtype, x.numel);
  for (let i = 0; i < values.length; i++) values[i] = rng.uniform() < p ? 0 : keep;
  using mask = withGradMode(false, () => Tensor.fromTypedArray(values as Float32Array | Float64Array, x.shape, { dtype: x.dtype, device: x.device }));
  return mul(x, mask);
}
