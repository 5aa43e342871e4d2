/**
 * Gradient buckets of data parallelism: the parameters, in the reverse of
 * their registration order (about the order a backward pass finishes their
 * gradients), cut into buckets of at most `capBytes` of one dtype and device.
 * A bucket's gradients are copied into one flat tensor, reduced by one
 * collective, and copied back; where they are exactly the parts of a fused
 * optimizer's flat gradient (tensor/tiling.ts), that is reduced in place.
 */
import type { DType } from "../dtype.ts";
import { coalesce, Tensor } from "../tensor/index.ts";

export interface BucketEntry {
  param: Tensor;
  offset: number;
  numel: number;
}

export class Bucket implements Disposable {
  readonly flat: Tensor;
  /** Parameters whose gradient this backward pass has finished. */
  readonly ready = new Set<Tensor>();
  /** The collective in flight, once launched. */
  reduction: Promise<void> | undefined;
  /** What the collective of this pass reduces: `flat`, or the gradients' own flat tensor. */
  private reduced: Tensor | undefined;

  readonly entries: readonly BucketEntry[];

  constructor(entries: readonly BucketEntry[], dtype: DType, device: Tensor["device"], numel: number) {
    this.entries = entries;
    this.flat = Tensor.empty([numel], { dtype, device });
  }

  get complete(): boolean {
    return this.ready.size === this.entries.length;
  }

  /**
   * The tensor to reduce: the gradients' own flat tensor where they are exactly its parts, else `flat`, into
   * which they are copied (zeros for a parameter that has none).
   */
  gather(): Tensor {
    const grads = this.entries.map((e) => e.param.grad);
    if (grads.every((g) => g !== undefined && !g.disposed)) {
      const parts = coalesce(grads as Tensor[]);
      if (parts.length === 1 && !grads.includes(parts[0])) return (this.reduced = parts[0]!);
    }
    this.reduced = this.flat;
    for (const e of this.entries) {
      using part = this.flat.narrow(0, e.offset, e.numel);
      const grad = e.param.grad;
      if (grad === undefined || grad.disposed) part.fill(0);
      else {
        using flatGrad = grad.reshape([e.numel]);
        part.copyFrom(flatGrad);
      }
    }
    return this.flat;
  }

  /** The reduced flat tensor back into the gradients, made where a parameter has none (nothing to do when reduced in place). */
  scatter(): void {
    if (this.reduced !== this.flat) return;
    for (const e of this.entries) {
      using part = this.flat.narrow(0, e.offset, e.numel);
      using shaped = part.reshape(e.param.shape);
      if (e.param.grad === undefined || e.param.grad.disposed) e.param.grad = shaped.clone();
      else e.param.grad.copyFrom(shaped);
    }
  }

  reset(): void {
    this.ready.clear();
    this.reduction = undefined;
    this.reduced = undefined;
  }

  [Symbol.dispose](): void {
    this.flat.dispose();
  }
}

/** The buckets of `params` (each at most `capBytes`, but a larger parameter alone), latest-registered first. */
export function makeBuckets(params: readonly Tensor[], capBytes: number): Bucket[] {
  const buckets: Bucket[] = [];
  let entries: BucketEntry[] = [], numel = 0, bytes = 0, key = "";
  const close = () => {
    if (entries.length === 0) return;
    const first = entries[0]!.param;
    buckets.push(new Bucket(entries, first.dtype, first.device, numel));
    entries = [];
    numel = 0;
    bytes = 0;
  };
  for (const p of [...params].reverse()) {
    const k = `${p.dtype}@${p.device}`;
    const size = p.numel * p.itemSize;
    if (k !== key || (entries.length > 0 && bytes + size > capBytes)) close();
    key = k;
    entries.push({ param: p, offset: numel, numel: p.numel });
    numel += p.numel;
    bytes += size;
  }
  close();
  return buckets;
}
