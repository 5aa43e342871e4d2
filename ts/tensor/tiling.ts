/**
 * Flat tensors tiled by parts: an optimizer's flat gradients, whose
 * parameters' gradients are views of it (optim/flat.ts). Between its parts a
 * flat tensor holds zeros, so that a norm or an overflow check over it equals
 * one over its parts: a call given exactly the parts of one flat tensor
 * (clipGradNorm_, GradScaler.unscale_) runs once over it instead of once per part.
 */
import type { Storage } from "../storage.ts";
import { contiguousStrides, sameShape } from "./shape.ts";
import type { Tensor } from "./tensor.ts";

interface Tiling {
  readonly flat: Tensor;
  /** Each part's element count by its offset in the flat tensor's storage, in elements. */
  readonly parts: ReadonlyMap<number, number>;
}

const tilings = new WeakMap<Storage, Tiling>();

/** Declares `flat` (1-D, contiguous, alone on its storage) tiled by parts at these offsets and of these sizes, with zeros between them. */
export function registerTiling(flat: Tensor, parts: readonly { offset: number; numel: number }[]): void {
  tilings.set(flat.storage, { flat, parts: new Map(parts.map((p) => [p.offset, p.numel])) });
}

/**
 * `tensors` with each complete set of one flat tensor's parts (every part once, as the contiguous view of its
 * place) replaced by that flat tensor, at the place of its first part; anything else as it is.
 */
export function coalesce(tensors: readonly Tensor[]): Tensor[] {
  const byStorage = new Map<Storage, Tensor[]>();
  for (const t of tensors) {
    const tiling = tilings.get(t.storage);
    if (tiling === undefined || tiling.flat.disposed || t.dtype !== tiling.flat.dtype) continue;
    let list = byStorage.get(t.storage);
    if (list === undefined) byStorage.set(t.storage, list = []);
    list.push(t);
  }
  const whole = new Set<Storage>();
  for (const [storage, parts] of byStorage) {
    const tiling = tilings.get(storage)!;
    const seen = new Set<number>();
    const exact = parts.every((t) => {
      if (tiling.parts.get(t.offset) !== t.numel || seen.has(t.offset) || !sameShape(t.strides, contiguousStrides(t.shape))) return false;
      seen.add(t.offset);
      return true;
    });
    if (exact && seen.size === tiling.parts.size) whole.add(storage);
  }
  if (whole.size === 0) return [...tensors];
  const out: Tensor[] = [], placed = new Set<Storage>();
  for (const t of tensors) {
    if (!whole.has(t.storage)) out.push(t);
    else if (!placed.has(t.storage)) {
      placed.add(t.storage);
      out.push(tilings.get(t.storage)!.flat);
    }
  }
  return out;
}
