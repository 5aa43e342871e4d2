/**
 * The backward pass: the nodes reachable from the root, in reverse
 * topological order, each run once with the sum of the gradients its outputs
 * received; a leaf's gradient is added into its .grad (or written there
 * directly by ops that accumulate, through BackwardContext.accumulator).
 * Every node run is then consumed: what it saved is freed and the tensors it
 * made are disposed (all but the root), so a training step leaves nothing
 * behind but the leaves' gradients.
 */
import { LLTMError } from "../errors.ts";
import { sameShape, Tensor } from "../tensor/index.ts";
import { withGradMode } from "./grad_mode.ts";
import { hasPostAccumulateGradHooks, runPostAccumulateGradHooks } from "./hooks.ts";
import type { BackwardContext, Edge, Node } from "./node.ts";

/** Nodes reachable from `root`, each after every node that feeds it a gradient. */
function order(root: Node): Node[] {
  const seen = new Set<Node>([root]);
  const post: Node[] = [];
  const stack: [Node, number][] = [[root, 0]];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const [node, next] = top;
    if (next < node.edges.length) {
      top[1]++;
      const up = node.edges[next]?.node;
      if (up !== undefined && !seen.has(up)) {
        if (up.released) throw consumed("backward");
        seen.add(up);
        stack.push([up, 0]);
      }
    } else {
      stack.pop();
      post.push(node);
    }
  }
  return post.reverse();
}

function consumed(fn: string): LLTMError {
  return new LLTMError(
    "INVALID_ARGUMENT",
    `${fn}: the graph has already been consumed by an earlier backward() (run the forward again to differentiate again)`,
  );
}

/** Adds `g` (ours) into `leaf`'s .grad, or makes it the .grad (contiguous, as optimizers read it). */
function accumulateLeaf(leaf: Tensor, g: Tensor): void {
  if (leaf.disposed) {
    g.dispose();
    return;
  }
  const grad = leaf.grad;
  if (grad === undefined || grad.disposed) {
    if (g.isContiguous() && g.dtype === leaf.dtype) leaf.grad = g;
    else {
      leaf.grad = Tensor.empty(leaf.shape, { dtype: leaf.dtype, device: leaf.device });
      leaf.grad.copyFrom(g);
      g.dispose();
    }
    return;
  }
  grad.add_(g);
  g.dispose();
}

/** The leaf's .grad to add into, made at zero when it has none. */
function leafAccumulator(leaf: Tensor): Tensor {
  if (leaf.grad === undefined || leaf.grad.disposed) leaf.grad = Tensor.zeros(leaf.shape, { dtype: leaf.dtype, device: leaf.device });
  return leaf.grad;
}

export function runBackward(root: Tensor, seed?: Tensor): void {
  const fn = "backward";
  root.assertLive(fn);
  if (!root.requiresGrad) {
    throw new LLTMError(
      "INVALID_ARGUMENT",
      `${fn}: the tensor does not require gradients (no input of the ops that made it requires them, or they ran inside noGrad)`,
    );
  }
  if (seed === undefined && root.numel !== 1) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'grad' must be given for a tensor of shape [${root.shape.join(", ")}] (only a one-element tensor's is implied)`);
  }
  if (seed !== undefined) {
    seed.assertLive(fn);
    if (!sameShape(seed.shape, root.shape)) {
      throw new LLTMError("SHAPE_MISMATCH", `${fn}: 'grad' has shape [${seed.shape.join(", ")}], the tensor [${root.shape.join(", ")}]`);
    }
  }
  withGradMode(false, () => {
    // Ours to add into and dispose: the caller's gradient is copied.
    const first = seed === undefined
      ? Tensor.ones(root.shape, { dtype: root.dtype, device: root.device })
      : seed.clone(root.device);
    const node = root.gradFn;
    if (node === undefined) {
      accumulateLeaf(root, first);
      if (hasPostAccumulateGradHooks(root)) runPostAccumulateGradHooks(root);
      return;
    }
    if (node.released) {
      first.dispose();
      throw consumed(fn);
    }
    run(node, root, first);
  });
}

function run(rootNode: Node, root: Tensor, first: Tensor): void {
  let nodes: Node[];
  try {
    nodes = order(rootNode);
  } catch (e) {
    first.dispose();
    throw e;
  }
  // Held until each has run, so that releasing a node downstream cannot free one still to run.
  for (const n of nodes) n.ref();
  const awaiting = hookedLeafEdges(nodes);
  const pending = new Map<Node, (Tensor | undefined)[]>();
  pending.set(rootNode, []);
  pending.get(rootNode)![root.outputIndex] = first;
  const give = (edge: Edge, g: Tensor) => {
    if (edge.leaf !== undefined) return accumulateLeaf(edge.leaf, g);
    let slots = pending.get(edge.node);
    if (slots === undefined) pending.set(edge.node, slots = []);
    const have = slots[edge.index];
    if (have === undefined) slots[edge.index] = g;
    else {
      // A sum of our own: the first gradient may be a view of another tensor.
      const sum = have.clone();
      sum.add_(g);
      have.dispose();
      g.dispose();
      slots[edge.index] = sum;
    }
  };
  try {
    for (const node of nodes) {
      const grads = pending.get(node) ?? [];
      pending.delete(node);
      try {
        if (grads.some((g) => g !== undefined)) {
          const ctx: BackwardContext = {
            accumulator: (i) => {
              const leaf = node.edges[i]?.leaf;
              return leaf === undefined || leaf.disposed ? undefined : leafAccumulator(leaf);
            },
          };
          const results = node.backward(grads, ctx);
          for (let i = 0; i < results.length; i++) {
            const g = results[i];
            if (g === undefined) continue;
            const edge = node.edges[i];
            if (edge === undefined) g.dispose();
            else give(edge, g);
          }
        }
        if (awaiting.size > 0) finishLeaves(node, awaiting);
      } finally {
        for (const g of grads) g?.dispose();
        consume(node, root);
      }
    }
  } finally {
    for (const slots of pending.values()) for (const g of slots) g?.dispose();
    for (const n of nodes) {
      consume(n, root);
      n.unref();
    }
  }
}

/** For each leaf with post-accumulate hooks, how many edges of `nodes` lead to it. */
function hookedLeafEdges(nodes: readonly Node[]): Map<Tensor, number> {
  const awaiting = new Map<Tensor, number>();
  for (const node of nodes) {
    for (const edge of node.edges) {
      const leaf = edge?.leaf;
      if (leaf !== undefined && hasPostAccumulateGradHooks(leaf)) awaiting.set(leaf, (awaiting.get(leaf) ?? 0) + 1);
    }
  }
  return awaiting;
}

/** Counts `node`'s edges to hooked leaves as done, running the hooks of a leaf whose last edge that was. */
function finishLeaves(node: Node, awaiting: Map<Tensor, number>): void {
  for (const edge of node.edges) {
    const leaf = edge?.leaf;
    const left = leaf === undefined ? undefined : awaiting.get(leaf);
    if (left === undefined) continue;
    if (left > 1) awaiting.set(leaf!, left - 1);
    else {
      awaiting.delete(leaf!);
      if (!leaf!.disposed) runPostAccumulateGradHooks(leaf!);
    }
  }
}

/** Frees what `node` saved and disposes the tensors it made, but `root`. */
function consume(node: Node, root: Tensor): void {
  node.release();
  for (const t of node.outputs) if (t !== root) t.disposeByTape();
}
