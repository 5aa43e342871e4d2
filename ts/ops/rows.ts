/**
 * The 2-D rows the row-wise ops of csrc/lltm_ops.def take ([N, C]) from a
 * tensor of any rank ([..., C]), and back.
 */
import { Tensor } from "../tensor/index.ts";

/** t as [N, C] rows: itself when 2-D, else a view (or, not contiguous, a copy) of its leading dimensions flattened. */
export function rows(t: Tensor): Tensor {
  if (t.ndim === 2) return t.retain();
  const last = t.shape[t.ndim - 1]!;
  return t.reshape([t.numel / last, last]);
}

/** t ([N, ...]) with the leading dimensions of `like` ([..., K]) and its own later ones; `t` is disposed. */
export function unflatten(t: Tensor, like: readonly number[]): Tensor {
  if (like.length === 2) return t;
  const shaped = t.reshape([...like.slice(0, -1), ...t.shape.slice(1)]);
  t.dispose();
  return shaped;
}

/** t ([N]) with the leading dimensions of `like` ([..., K]); `t` is disposed. */
export function unflattenRows(t: Tensor, like: readonly number[]): Tensor {
  if (like.length === 2) return t;
  const shaped = t.reshape(like.length === 1 ? [1] : like.slice(0, -1));
  t.dispose();
  return shaped;
}
