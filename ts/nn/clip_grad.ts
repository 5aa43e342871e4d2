/**
 * clipGradNorm_, as torch.nn.utils.clip_grad_norm_: the norm of every
 * gradient together (SUM_SQUARES into one total on the device), then each
 * gradient scaled by min(1, maxNorm / norm) (SCALE_BY_NORM, reading the total
 * where it lives): nothing comes back to the host unless the caller reads
 * the returned total.
 */
import { LLTMError } from "../errors.ts";
import { ACCUMULATE_PARAM_GRADS } from "../native/constants.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";

const SUM_SQUARES = native.op("SUM_SQUARES"), SCALE_BY_NORM = native.op("SCALE_BY_NORM");

/**
 * Scales the gradients of `parameters` (those that have one) in place so that their joint norm is at most
 * maxNorm; returns the squared norm before clipping as a [1] float32 tensor on their device
 * (Math.sqrt(result.item()) reads the norm, a synchronisation).
 */
export function clipGradNorm_(parameters: Iterable<Tensor>, maxNorm: number): Tensor {
  const fn = "clipGradNorm_";
  if (typeof maxNorm !== "number" || !(maxNorm >= 0) || !Number.isFinite(maxNorm)) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'maxNorm' must be a finite number ≥ 0, got ${maxNorm}`);
  }
  const grads: Tensor[] = [];
  for (const p of parameters) {
    if (!(p instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'parameters' must hold Tensors`);
    if (p.grad !== undefined && !p.grad.disposed) grads.push(p.grad);
  }
  if (grads.length === 0) throw new LLTMError("INVALID_ARGUMENT", `${fn}: no parameter has a gradient (run backward() first)`);
  const device = grads[0]!.device;
  for (const g of grads) {
    if (g.device !== device) throw new LLTMError("INVALID_DEVICE", `${fn}: gradients on ${device} and ${g.device}; clip each device's parameters apart`);
  }
  const total = Tensor.zeros([1], { dtype: grads[0]!.dtype === "float64" ? "float64" : "float32", device });
  try {
    for (const g of grads) native.run(SUM_SQUARES, fn, [g, total], ACCUMULATE_PARAM_GRADS);
    for (const g of grads) native.run(SCALE_BY_NORM, fn, [g, total], 0, [maxNorm]);
  } catch (e) {
    total.dispose();
    throw e;
  }
  return total;
}
