/**
 * Hooks run on a leaf once a backward pass has finished its gradient (as
 * torch's register_post_accumulate_grad_hook): when every node of that pass
 * with an edge to the leaf has run, so `.grad` holds this pass's sum. Data
 * parallelism starts reducing a gradient there, while the backward goes on.
 */
import type { Tensor } from "../tensor/index.ts";

export type PostAccumulateGradHook = (leaf: Tensor) => void;

const hooks = new WeakMap<Tensor, Set<PostAccumulateGradHook>>();

/** Runs `hook(leaf)` after each backward pass that gives `leaf` a gradient; the handle removes it. */
export function registerPostAccumulateGradHook(leaf: Tensor, hook: PostAccumulateGradHook): { remove(): void } {
  let set = hooks.get(leaf);
  if (set === undefined) hooks.set(leaf, set = new Set());
  set.add(hook);
  return { remove: () => void set.delete(hook) };
}

export function hasPostAccumulateGradHooks(leaf: Tensor): boolean {
  return (hooks.get(leaf)?.size ?? 0) > 0;
}

export function runPostAccumulateGradHooks(leaf: Tensor): void {
  for (const hook of [...(hooks.get(leaf) ?? [])]) hook(leaf);
}
