/**
 * A node of the tape: one recorded op, what its backward needs, and the
 * edges to where its inputs came from (another node's output, or a leaf
 * tensor whose .grad receives the gradient).
 *
 * A node lives while something can still reach it: the tensors it made
 * (until they are disposed) and the nodes downstream of it (until they are
 * released). When nothing can, or once a backward pass has run it, it
 * releases what it saved, so that a graph built and never differentiated
 * (an evaluation under grad mode, an exception) frees its memory as soon as
 * its last tensor is disposed.
 */
import type { Tensor } from "../tensor/index.ts";

/** Where an input's gradient goes: output `index` of `node`, or the leaf tensor `leaf`. */
export type Edge = { readonly node: Node; readonly index: number; readonly leaf?: undefined } | {
  readonly leaf: Tensor;
  readonly node?: undefined;
};

export interface BackwardContext {
  /**
   * For a leaf input i, the tensor to add its gradient into (the leaf's .grad,
   * made at zero when it has none), so that an op that can accumulate
   * (the library's ACC slots) writes there directly; undefined otherwise.
   */
  accumulator(i: number): Tensor | undefined;
}

export abstract class Node {
  /** The public function that recorded it, for messages. */
  readonly name: string;
  /** Per input, where its gradient goes; undefined where none is needed. */
  edges: readonly (Edge | undefined)[] = [];
  /** The tensors it made, by output index; disposed when a backward pass consumes the node. */
  outputs: readonly Tensor[] = [];
  private refs = 0;
  private isReleased = false;

  constructor(name: string) {
    this.name = name;
  }

  get released(): boolean {
    return this.isReleased;
  }

  /** Whether input i needs a gradient. */
  needs(i: number): boolean {
    return this.edges[i] !== undefined;
  }

  /**
   * The gradients of the inputs from those of the outputs (undefined where an
   * output received none: zeros), one per input: a new tensor, or undefined
   * where none is needed or it was added into ctx.accumulator(i). Runs once,
   * with recording off.
   */
  abstract backward(grads: readonly (Tensor | undefined)[], ctx: BackwardContext): (Tensor | undefined)[];

  /** Releases what forward saved for backward. */
  protected abstract releaseSaved(): void;

  ref(): void {
    this.refs++;
  }

  unref(): void {
    if (--this.refs === 0) this.release();
  }

  /** Frees what the node saved and lets go of the nodes upstream; idempotent. */
  release(): void {
    if (this.isReleased) return;
    this.isReleased = true;
    this.releaseSaved();
    for (const e of this.edges) e?.node?.unref();
  }
}
