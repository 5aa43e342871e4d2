/**
 * clipGradNorm_ over parameters, as torch.nn.utils.clip_grad_norm_: the
 * gradients of those that have one (ops/clip_grad_norm.ts: one norm on the
 * device, each gradient scaled in place, nothing read back). Tensors that do
 * not require gradients are taken as gradients themselves.
 */
import { LLTMError } from "../errors.ts";
import { clipGradNorm_ as clipGradients } from "../ops/clip_grad_norm.ts";
import { Tensor } from "../tensor/index.ts";

/** Scales the gradients so that their joint 2-norm is at most maxNorm; returns the norm before clipping, [1], on their device. */
export function clipGradNorm_(parameters: Iterable<Tensor>, maxNorm: number): Tensor {
  const grads: Tensor[] = [];
  for (const p of parameters) {
    if (!(p instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", "clipGradNorm_: 'parameters' must hold Tensors");
    if (p.grad !== undefined && !p.grad.disposed) grads.push(p.grad);
    else if (!p.requiresGrad) grads.push(p);
  }
  return clipGradients(grads, maxNorm);
}
