/**
 * A fused optimizer's flat buffer (fused: true): the parameters of one group,
 * device and dtype moved into one block of memory, each parameter a view of
 * it (relocated: the same Tensor object, its values kept, so the module and
 * whoever holds the tensor see the update), their gradients views of one flat
 * gradient tensor (so that backward() adds into it in place), and the state
 * (moments, master weights) flat beside them, part for part at the same
 * element offsets. A step runs the update once over the whole buffer where
 * every parameter's gradient is its view there; zeroGrad fills it once.
 *
 * Parts start 64-byte aligned, as an op's outputs do (tensor/group.ts), with
 * zeros between them in every flat tensor; the update keeps those zeros (a
 * zero gradient on zero state moves nothing), which the gradient's tiling
 * (tensor/tiling.ts) relies on.
 */
import { noGrad } from "../autograd/grad_mode.ts";
import { type DType, isHalf, itemSize } from "../dtype.ts";
import { contiguousStrides, registerTiling, Tensor } from "../tensor/index.ts";
import type { Held } from "./optimizer.ts";

/** Where a flat buffer's parts start: at multiples of this many bytes (the stacked LLTM ops take the same layout). */
export const ALIGN_BYTES = 64;

/** The state name of a half parameter's float32 copy. */
export const MASTER = "master";

export class FlatBuffer implements Disposable {
  /** The optimizer's indices of the parameters held, in order. */
  readonly members: readonly number[];
  /** The parameters' values, flat. */
  readonly value: Tensor;
  /** Their gradients, flat (float32 for master weights). */
  readonly grad: Tensor;
  /** The state by name, flat (the master copy as MASTER). */
  readonly state: ReadonlyMap<string, Tensor>;
  /** Per member, its state as views of the flat state, shaped as the parameter. */
  readonly memberState: readonly ReadonlyMap<string, Tensor>[];
  private readonly params: readonly Held[];
  private readonly offsets: readonly number[];
  /** Per member, the view of `grad` last handed to its .grad (a new one once that is disposed). */
  private readonly gradViews: (Tensor | undefined)[];

  /**
   * Moves `params[i]` for every i of `members` (one device and dtype, contiguous, each alone on its memory) into
   * a new block; a member whose gradient is its own tensor (a { name, value, grad } record's) has that moved too.
   */
  constructor(params: readonly Held[], members: readonly number[], stateNames: readonly string[], master: boolean) {
    this.params = params;
    this.members = members;
    const first = params[members[0]!]!.value;
    const dtype = first.dtype, device = first.device;
    const wide: DType = master ? "float32" : dtype;
    const align = ALIGN_BYTES / itemSize(dtype);
    const offsets: number[] = [];
    let total = 0;
    for (const i of members) {
      offsets.push(total);
      total += Math.ceil(params[i]!.value.numel / align) * align;
    }
    this.offsets = offsets;
    this.gradViews = members.map(() => undefined);
    const made: Tensor[] = [];
    try {
      const make = (d: DType) => {
        const t = Tensor.zeros([total], { dtype: d, device });
        made.push(t);
        return t;
      };
      this.value = make(dtype);
      this.grad = make(wide);
      const state = new Map<string, Tensor>(stateNames.map((n) => [n, make(wide)]));
      this.state = state;
      noGrad(() => {
        members.forEach((i, k) => {
          const p = params[i]!;
          using place = this.view(this.value, k);
          p.value.relocate(place);
          if (p.setGrad === undefined) {
            using gradPlace = this.view(this.grad, k);
            p.grad()!.relocate(gradPlace);
          }
        });
        if (master) {
          const copy = make("float32");
          copy.copyFrom(this.value);
          state.set(MASTER, copy);
        }
      });
      this.memberState = members.map((_, k) => new Map([...state].map(([n, t]) => [n, this.view(t, k)])));
    } catch (e) {
      for (const t of made) t.dispose();
      throw e;
    }
    registerTiling(this.grad, members.map((i, k) => ({ offset: offsets[k]!, numel: params[i]!.value.numel })));
    this.adopt();
  }

  /** The tensor the update writes: the float32 master copy where there is one, else the values. */
  get target(): Tensor {
    return this.state.get(MASTER) ?? this.value;
  }

  /** Member k's part of `flat`, shaped as its parameter (a new reference). */
  private view(flat: Tensor, k: number): Tensor {
    const shape = this.params[this.members[k]!]!.value.shape;
    return flat.viewWith(shape, contiguousStrides(shape), flat.offset + this.offsets[k]!);
  }

  /** Whether member k's gradient now is its view of the flat gradient. */
  private inPlace(k: number): boolean {
    const g = this.params[this.members[k]!]!.grad();
    return g !== undefined && !g.disposed && g.storage === this.grad.storage && g.offset === this.grad.offset + this.offsets[k]!;
  }

  /** Points member k's .grad at its view of the flat gradient (its values copied there first unless `discard`). */
  private bind(k: number, discard: boolean): void {
    const p = this.params[this.members[k]!]!;
    let view = this.gradViews[k];
    if (view === undefined || view.disposed) view = this.gradViews[k] = this.view(this.grad, k);
    if (!discard) noGrad(() => view.copyFrom(p.grad()!));
    p.setGrad!(view);
  }

  /** Whether member k's gradient can be bound to the flat gradient: a tensor's .grad of a type it holds exactly. */
  private bindable(k: number): boolean {
    const p = this.params[this.members[k]!]!;
    const g = p.grad();
    if (p.setGrad === undefined || g === undefined || g.disposed) return false;
    return g.dtype === this.grad.dtype || (this.state.has(MASTER) && isHalf(g.dtype));
  }

  /**
   * The flat gradient when every member's gradient is its view there, after binding those that are elsewhere
   * (a gradient backward() made where there was none, or a half one to widen: copied in); undefined where a
   * member has no gradient, or one that cannot be bound, so that the step goes parameter by parameter.
   */
  adopt(): Tensor | undefined {
    const apart = this.members.map((_, k) => k).filter((k) => !this.inPlace(k));
    if (!apart.every((k) => this.bindable(k))) return undefined;
    for (const k of apart) this.bind(k, false);
    return this.grad;
  }

  /**
   * zeroGrad over the buffer: when every member has a gradient, all are bound to the flat gradient (those
   * elsewhere dropped, as they would be zeroed) and it is filled once; returns false (nothing done) otherwise.
   */
  zero(): boolean {
    const apart = this.members.map((_, k) => k).filter((k) => !this.inPlace(k));
    if (!apart.every((k) => this.bindable(k))) return false;
    for (const k of apart) this.bind(k, true);
    this.grad.fill(0);
    return true;
  }

  /** Frees the flat tensors the buffer holds; the parameters and gradients viewing them keep their memory. */
  dispose(): void {
    for (const t of [this.value, this.grad, ...this.state.values()]) t.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
