/**
 * Tensor: a strided view of native memory on the CPU or a CUDA device, of
 * float32, float64, bfloat16 or float16 elements. Views (transpose, narrow,
 * expand, reshape where the strides allow) share memory with their source;
 * every tensor must be disposed (or used with `using`), and the memory is
 * freed when the last tensor viewing it is disposed. A finalizer frees what
 * is forgotten.
 *
 * This file holds the class and its state; the work of its methods lives
 * beside it by job: factories.ts, views.ts, copies.ts.
 */
import { requireDevice } from "../cuda.ts";
import { recordView, refuseInPlace, runBackward } from "../autograd/record.ts";
import type { Node } from "../autograd/node.ts";
import { Device, type DeviceLike } from "../device.ts";
import { type DType, itemSize, type StorageArray, type ValueArray } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import { denoInspect, formatTensor, nodeInspect } from "../inspect.ts";
import * as native from "../native/index.ts";
import { newDescribableId } from "../native/index.ts";
import type { Storage } from "../storage.ts";
import * as copies from "./copies.ts";
import * as factories from "./factories.ts";
import { numelOf, sameShape } from "./shape.ts";
import * as views from "./views.ts";

export interface TensorOptions {
  dtype?: DType;
  device?: DeviceLike;
  /**
   * Page-locked host memory (a CPU tensor), as torch's pin_memory=True: copies from it to a GPU
   * may run asynchronously (`to(device, { nonBlocking: true })`). Needs the CUDA backend.
   */
  pinMemory?: boolean;
}

export interface CopyOptions {
  /**
   * From pinned host memory to a GPU, return once the copy is queued on the GPU's stream, as torch's
   * non_blocking=True: the source must not be written until the copy has run (it may be disposed at once).
   * Every other copy has finished on return, with or without it.
   */
  nonBlocking?: boolean;
}

export interface RandomOptions extends TensorOptions {
  /** Seed of the generator; the same seed gives the same values on every runtime. */
  seed?: number;
}

export interface ToTypedArrayOptions {
  /** The stored bits of a half type as a Uint16Array, rather than its values as float32 (float32 and float64 are their own bits). */
  raw?: boolean;
}

export type NestedArray = number | NestedArray[];

export class Tensor implements native.NativeTensor {
  /** Unique in the process: the native layer keeps descriptors of the views it has seen by it. */
  readonly id: number;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  /** Offset of the first element from the start of the storage, in elements. */
  readonly offset: number;
  readonly dtype: DType;
  /** The memory this tensor views (shared with its views). */
  readonly storage: Storage;
  private isDisposed: boolean;
  /**
   * What autograd keeps of this tensor, made the first time any of it is set:
   * most tensors (an op's outputs outside autograd) never take part, and a
   * tensor with fewer fields is cheaper to make at every call.
   */
  private tape: TapeState | undefined;

  /** Wraps `storage`, taking over one of its references. Use the factories instead. */
  constructor(storage: Storage, dtype: DType, shape: readonly number[], strides: readonly number[], offset = 0) {
    this.id = newDescribableId();
    this.storage = storage;
    this.dtype = dtype;
    this.shape = shape;
    this.strides = strides;
    this.offset = offset;
    this.isDisposed = false;
    this.tape = undefined;
  }

  /** Bytes per element. */
  get itemSize(): number {
    return itemSize(this.dtype);
  }

  /** The tape's node that made this tensor (undefined for a leaf); set by the tape. */
  get gradFn(): Node | undefined {
    return this.tape?.gradFn;
  }

  set gradFn(node: Node | undefined) {
    this.tapeState().gradFn = node;
  }

  /** Which of gradFn's outputs this tensor is; set by the tape. */
  get outputIndex(): number {
    return this.tape?.outputIndex ?? 0;
  }

  set outputIndex(index: number) {
    this.tapeState().outputIndex = index;
  }

  /** A leaf's gradient, accumulated by backward() until an optimizer's zeroGrad() (undefined until then). */
  get grad(): Tensor | undefined {
    return this.tape?.grad;
  }

  set grad(grad: Tensor | undefined) {
    this.tapeState().grad = grad;
  }

  private tapeState(): TapeState {
    return (this.tape ??= new TapeState());
  }

  // ---- factories (factories.ts) ----

  /** A tensor with uninitialised contents. */
  static empty(shape: readonly number[], options: TensorOptions = {}): Tensor {
    requireDevice(options.device, "Tensor.empty");
    return factories.empty(shape, options);
  }

  static zeros(shape: readonly number[], options: TensorOptions = {}): Tensor {
    requireDevice(options.device, "Tensor.zeros");
    return factories.full(shape, 0, options, "Tensor.zeros");
  }

  static ones(shape: readonly number[], options: TensorOptions = {}): Tensor {
    requireDevice(options.device, "Tensor.ones");
    return factories.full(shape, 1, options, "Tensor.ones");
  }

  /** Every element `value`, rounded to the dtype. */
  static full(shape: readonly number[], value: number, options: TensorOptions = {}): Tensor {
    requireDevice(options.device, "Tensor.full");
    return factories.full(shape, value, options);
  }

  /**
   * A copy of `data` viewed with `shape` (default: 1-D). Its dtype follows the
   * array (float32, float64, int32) unless `dtype` says otherwise (the values are then
   * converted, rounding to nearest even); a Uint16Array holds the raw bits of
   * a bfloat16 or float16 `dtype`.
   */
  static fromTypedArray(
    data: Float32Array | Float64Array | Uint16Array | Int32Array,
    shape?: readonly number[],
    options: TensorOptions = {},
  ): Tensor {
    requireDevice(options.device, "Tensor.fromTypedArray");
    return factories.fromTypedArray(data, shape, options);
  }

  /** A tensor from nested arrays of numbers, e.g. [[1, 2], [3, 4]]. */
  static fromArray(data: NestedArray, options: TensorOptions = {}): Tensor {
    requireDevice(options.device, "Tensor.fromArray");
    return factories.fromArray(data, options);
  }

  /** Standard normal values from a seeded generator. */
  static randn(shape: readonly number[], options: RandomOptions = {}): Tensor {
    requireDevice(options.device, "Tensor.randn");
    return factories.randn(shape, options);
  }

  /** Uniform values in [low, high) from a seeded generator. */
  static rand(shape: readonly number[], options: RandomOptions & { low?: number; high?: number } = {}): Tensor {
    requireDevice(options.device, "Tensor.rand");
    return factories.rand(shape, options);
  }

  // ---- properties ----

  get device(): Device {
    return this.storage.device;
  }

  get ndim(): number {
    return this.shape.length;
  }

  get numel(): number {
    return numelOf(this.shape);
  }

  get disposed(): boolean {
    return this.isDisposed;
  }

  /** Address of the first element; throws once the tensor is disposed. */
  get dataAddress(): number {
    if (this.isDisposed) throw disposedError("this tensor", this.tape?.disposedBy);
    const offset = this.offset;
    return offset === 0 ? this.storage.address : this.storage.address + offset * itemSize(this.dtype);
  }

  isContiguous(): boolean {
    let expected = 1;
    for (let d = this.shape.length - 1; d >= 0; d--) {
      if (this.shape[d] !== 1 && this.strides[d] !== expected) return false;
      expected *= this.shape[d]!;
    }
    return true;
  }

  toString(): string {
    return `Tensor(${this.dtype}, [${this.shape.join(", ")}], ${this.device}${this.isDisposed ? ", disposed" : ""})`;
  }

  /** What console.log prints under Node and Bun: dtype, device, shape and values. */
  [nodeInspect](): string {
    return formatTensor(this);
  }

  /** What console.log prints under Deno. */
  [denoInspect](): string {
    return formatTensor(this);
  }

  // ---- views (views.ts) ----

  /** Swaps two dimensions (by default the two of a matrix). */
  transpose(dim0 = 0, dim1 = 1): Tensor {
    const out = views.transpose(this, dim0, dim1);
    return recordView("transpose", this, out, (g) => g.transpose(dim0, dim1));
  }

  /** `length` elements of dimension `dim` from `start`. */
  narrow(dim: number, start: number, length: number): Tensor {
    const out = views.narrow(this, dim, start, length);
    return recordView("narrow", this, out, (g, input) => scatterInto(input, g, (z) => z.narrow(dim, start, length)));
  }

  /** Elements [start, end) of dimension `dim`, with an optional step. */
  slice(dim: number, start: number, end?: number, step = 1): Tensor {
    const out = views.slice(this, dim, start, end, step);
    return recordView("slice", this, out, (g, input) => scatterInto(input, g, (z) => z.slice(dim, start, end, step)));
  }

  /** The same elements with another shape: a view where the strides allow one (always for a contiguous tensor), else a contiguous copy, as torch.reshape. */
  reshape(shape: readonly number[]): Tensor {
    const out = views.reshape(this, shape);
    const from = this.shape;
    return recordView("reshape", this, out, (g) => g.reshape(from));
  }

  /** Broadcasts dimensions of size 1 (and new leading dimensions) to `shape`, with stride 0. */
  expand(shape: readonly number[]): Tensor {
    refuseInPlace("expand", this);
    return views.expand(this, shape);
  }

  /**
   * Another reference to this very view, disposed on its own: it keeps the
   * memory alive after this tensor is disposed (as autograd keeps a saved input).
   */
  retain(): Tensor {
    this.assertLive("retain");
    return this.viewWith(this.shape, this.strides, this.offset);
  }

  // ---- copies and conversions (copies.ts) ----

  /** This tensor if it is contiguous (as a new reference), else a contiguous copy. */
  contiguous(): Tensor {
    return recordView("contiguous", this, copies.contiguous(this), (g) => g.retain());
  }

  /** A contiguous copy, on `device` (default: this tensor's). */
  clone(device?: DeviceLike): Tensor {
    const from = this.device;
    return recordView("clone", this, copies.clone(this, device), (g) => g.to(from));
  }

  /**
   * A copy on another device, or of another dtype (as torch's Tensor.to);
   * this tensor itself (as a new reference) when it already is that.
   */
  to(target: DeviceLike | DType, options: CopyOptions = {}): Tensor {
    requireDevice(target, "Tensor.to");
    const { device, dtype } = this;
    return recordView("to", this, copies.to(this, target, options), (g) => g.to(device).to(dtype));
  }

  /** Whether the tensor's memory is pinned host memory (see TensorOptions.pinMemory). */
  isPinned(): boolean {
    this.assertLive("isPinned");
    return this.storage.pinned;
  }

  /** A contiguous copy in pinned host memory (this tensor, as a new reference, when it already is pinned), as torch's pin_memory(). */
  pinMemory(): Tensor {
    return recordView("pinMemory", this, copies.pinMemory(this), (g) => g.retain());
  }

  /** A copy of another dtype (rounded to nearest even), on this tensor's device; a new reference when it already is that dtype. */
  cast(dtype: DType): Tensor {
    const from = this.dtype;
    return recordView("cast", this, copies.cast(this, dtype), (g) => g.cast(from));
  }

  cpu(): Tensor {
    return this.to("cpu");
  }

  /**
   * Copies `src` (same shape, any dtype, device and strides) into this
   * tensor, converting to this tensor's dtype; a `src` sharing memory with it
   * is copied out first.
   */
  copyFrom(src: Tensor, options: CopyOptions = {}): void {
    refuseInPlace("copyFrom", this, src);
    copies.copyFrom(this, src, options);
  }

  /** Sets every element to `value` (rounded to the dtype). */
  fill(value: number): this {
    refuseInPlace("fill", this);
    copies.fill(this, value);
    return this;
  }

  /** this += alpha * other, in place (same shape and device; any strides). */
  add_(other: Tensor, alpha = 1): this {
    refuseInPlace("add_", this, other);
    copies.addInPlace(this, other, alpha);
    return this;
  }

  /**
   * The elements in row-major order, copied to the host (after the device's
   * queued work): float32 values for bfloat16 and float16, or with `{ raw: true }`
   * their stored bits as a Uint16Array.
   */
  toTypedArray(): ValueArray;
  toTypedArray(options: ToTypedArrayOptions): StorageArray;
  toTypedArray(options: ToTypedArrayOptions = {}): StorageArray {
    return copies.toTypedArray(this, options.raw === true);
  }

  /** The elements as nested arrays of numbers. */
  toArray(): NestedArray {
    return copies.toArray(this);
  }

  /** The value of a one-element tensor, read to the host (after the device's queued work). */
  item(): number {
    this.assertLive("item");
    if (this.numel !== 1) {
      throw new LLTMError("INVALID_ARGUMENT", `item: the tensor must have one element, it has shape [${this.shape.join(", ")}]`);
    }
    return this.toTypedArray()[0]!;
  }

  // ---- autograd (autograd/) ----

  /** Whether gradients flow to this tensor: a leaf marked with requiresGrad_(), or the result of a recorded op. */
  get requiresGrad(): boolean {
    const tape = this.tape;
    return tape !== undefined && (tape.gradFn !== undefined || tape.leafRequiresGrad);
  }

  set requiresGrad(on: boolean) {
    this.requiresGrad_(on);
  }

  /** Marks a leaf (a tensor no recorded op made) as one whose gradient backward() accumulates into .grad. */
  requiresGrad_(on = true): this {
    this.assertLive("requiresGrad_");
    if (this.gradFn !== undefined) {
      throw new LLTMError("INVALID_ARGUMENT", "requiresGrad_: only a leaf's flag can be set; this tensor was made by a recorded op (use detach())");
    }
    if (on || this.tape !== undefined) this.tapeState().leafRequiresGrad = on;
    return this;
  }

  /** Whether no recorded op made this tensor. */
  get isLeaf(): boolean {
    return this.gradFn === undefined;
  }

  /**
   * Backpropagates from this tensor (a one-element loss, or with `grad` of its shape), adding into the
   * .grad of every leaf it depends on. The tape is consumed: the intermediate tensors it made are disposed
   * (keep one past backward with detach()); this tensor stays alive.
   */
  backward(grad?: Tensor): void {
    runBackward(this, grad);
  }

  /** Another reference to this tensor's memory that the tape does not follow (as torch's detach). */
  detach(): Tensor {
    this.assertLive("detach");
    return this.viewWith(this.shape, this.strides, this.offset);
  }

  // ---- lifetime ----

  /** Releases this tensor's reference to its memory (and its .grad); later use throws. Idempotent. */
  dispose(): void {
    if (this.isDisposed) return;
    this.isDisposed = true;
    this.storage.release();
    const tape = this.tape;
    if (tape === undefined) return;
    tape.grad?.dispose();
    tape.grad = undefined;
    tape.gradFn?.unref();
  }

  /** dispose(), by the tape once a backward pass has consumed the op that made this tensor. */
  disposeByTape(): void {
    if (!this.isDisposed) this.tapeState().disposedBy = "backward() consumed the graph that made it; keep it with detach() before backward()";
    this.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** Throws a clear error if this tensor has been disposed. */
  assertLive(operation: string): void {
    if (this.isDisposed) throw disposedError(`${operation}: the tensor`, this.tape?.disposedBy);
  }

  /**
   * Makes this tensor view `place` (a live contiguous tensor of its shape and dtype on its device) instead of its
   * own memory, its values copied there first, keeping its identity: the optimizers gather parameters into one
   * flat buffer this way (optim/flat.ts), so that the tensors a module and its users hold stay the same objects.
   * Other views of the old memory keep it; the caller makes sure there are none.
   */
  relocate(place: Tensor): void {
    this.assertLive("relocate");
    place.assertLive("relocate");
    if (place.dtype !== this.dtype || place.device !== this.device || !sameShape(place.shape, this.shape) || !place.isContiguous()) {
      throw new LLTMError("INTERNAL", `relocate: ${place} cannot hold ${this}`);
    }
    if (place.storage === this.storage && place.offset === this.offset && sameShape(place.strides, this.strides)) return;
    copies.copyFrom(place, this);
    place.storage.retain();
    this.storage.release();
    const self = this as Relocatable;
    self.storage = place.storage;
    self.offset = place.offset;
    self.strides = place.strides;
    // Descriptors are cached by id on the rule that a view never changes: this is a new view.
    self.id = newDescribableId();
  }

  /** A new tensor viewing this one's memory (another reference to it) with these sizes, strides and offset. */
  viewWith(shape: readonly number[], strides: readonly number[], offset: number): Tensor {
    this.storage.retain();
    return new Tensor(this.storage, this.dtype, [...shape], [...strides], offset);
  }

  /**
   * Whether a native call writing this tensor from `other` could read what it
   * has already written: they share bytes, and are not the very same elements
   * (which an elementwise call reads before writing).
   */
  sharesMemoryWith(other: Tensor): boolean {
    if (other.storage !== this.storage) return false;
    if (other.offset === this.offset && other.itemSize === this.itemSize && sameShape(other.strides, this.strides)) return false;
    return native.overlaps(this, other, this.itemSize, other.itemSize);
  }

  /** Dimension `dim` (negative counts from the end) as an index, or an LLTMError naming `operation`. */
  checkDim(dim: number, operation: string): number {
    const d = dim < 0 ? dim + this.ndim : dim;
    if (!Number.isInteger(d) || d < 0 || d >= this.ndim) {
      throw new LLTMError("INVALID_ARGUMENT", `${operation}: dimension ${dim} is out of range for a ${this.ndim}-D tensor`);
    }
    return d;
  }
}

/** What relocate() changes of a tensor, otherwise fixed at construction. */
type Relocatable = { -readonly [K in "id" | "storage" | "offset" | "strides"]: Tensor[K] };

/** A tensor's part in autograd (Tensor.tape). */
class TapeState {
  gradFn: Node | undefined = undefined;
  outputIndex = 0;
  leafRequiresGrad = false;
  grad: Tensor | undefined = undefined;
  /** Why the tape disposed the tensor, for the message of a later use. */
  disposedBy: string | undefined = undefined;
}

export function disposedError(what: string, why?: string): LLTMError {
  return new LLTMError("DISPOSED", `${what} has been disposed${why === undefined ? "" : ` (${why})`}`);
}

/** Zeros of `input`'s shape, dtype and device with `grad` copied into the view `select` makes of them: a view's backward. */
function scatterInto(input: { shape: readonly number[]; dtype: DType; device: Device }, grad: Tensor, select: (z: Tensor) => Tensor): Tensor {
  const z = Tensor.zeros(input.shape, { dtype: input.dtype, device: input.device });
  using view = select(z);
  view.copyFrom(grad);
  return z;
}

/** A device from user input (a Device or its name). */
export function deviceOf(device: DeviceLike | undefined): Device {
  return Device.of(device ?? "cpu");
}
