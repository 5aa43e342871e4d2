/**
 * Tensor: a strided view of native memory on the CPU or a CUDA device, of
 * float32, float64, bfloat16 or float16 elements. Views (transpose, narrow,
 * expand, reshape of a contiguous tensor) share memory with their source;
 * every tensor must be disposed (or used with `using`), and the memory is
 * freed when the last tensor viewing it is disposed. A finalizer frees what
 * is forgotten.
 *
 * This file holds the class and its state; the work of its methods lives
 * beside it by job: factories.ts, views.ts, copies.ts.
 */
import { requireDevice } from "../cuda.ts";
import { Device, type DeviceLike } from "../device.ts";
import { type DType, itemSize, type StorageArray, type ValueArray } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import { denoInspect, formatTensor, nodeInspect } from "../inspect.ts";
import * as native from "../native/index.ts";
import type { Storage } from "../storage.ts";
import * as copies from "./copies.ts";
import * as factories from "./factories.ts";
import { numelOf, sameShape } from "./shape.ts";
import * as views from "./views.ts";

export interface TensorOptions {
  dtype?: DType;
  device?: DeviceLike;
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
  readonly id: number = native.newDescribableId();
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  /** Offset of the first element from the start of the storage, in elements. */
  readonly offset: number;
  readonly dtype: DType;
  /** The memory this tensor views (shared with its views). */
  readonly storage: Storage;
  /** Bytes per element. */
  readonly itemSize: number;
  private isDisposed = false;

  /** Wraps `storage`, taking over one of its references. Use the factories instead. */
  constructor(storage: Storage, dtype: DType, shape: readonly number[], strides: readonly number[], offset = 0) {
    this.storage = storage;
    this.dtype = dtype;
    this.itemSize = itemSize(dtype);
    this.shape = shape;
    this.strides = strides;
    this.offset = offset;
  }

  // ---- factories (factories.ts) ----

  /** A tensor with uninitialised contents. */
  static empty(shape: readonly number[], options: TensorOptions = {}): Tensor {
    requireDevice(options.device, "Tensor.empty");
    return factories.empty(shape, options);
  }

  static zeros(shape: readonly number[], options: TensorOptions = {}): Tensor {
    requireDevice(options.device, "Tensor.zeros");
    return factories.full(shape, 0, options);
  }

  static ones(shape: readonly number[], options: TensorOptions = {}): Tensor {
    requireDevice(options.device, "Tensor.ones");
    return factories.full(shape, 1, options);
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
    if (this.isDisposed) throw disposedError("this tensor");
    return this.storage.address + this.offset * this.itemSize;
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
    return views.transpose(this, dim0, dim1);
  }

  /** `length` elements of dimension `dim` from `start`. */
  narrow(dim: number, start: number, length: number): Tensor {
    return views.narrow(this, dim, start, length);
  }

  /** Elements [start, end) of dimension `dim`, with an optional step. */
  slice(dim: number, start: number, end?: number, step = 1): Tensor {
    return views.slice(this, dim, start, end, step);
  }

  /** The same elements with another shape: a view of a contiguous tensor, else a contiguous copy. */
  reshape(shape: readonly number[]): Tensor {
    return views.reshape(this, shape);
  }

  /** Broadcasts dimensions of size 1 (and new leading dimensions) to `shape`, with stride 0. */
  expand(shape: readonly number[]): Tensor {
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
    return copies.contiguous(this);
  }

  /** A contiguous copy, on `device` (default: this tensor's). */
  clone(device?: DeviceLike): Tensor {
    return copies.clone(this, device);
  }

  /**
   * A copy on another device, or of another dtype (as torch's Tensor.to);
   * this tensor itself (as a new reference) when it already is that.
   */
  to(target: DeviceLike | DType): Tensor {
    requireDevice(target, "Tensor.to");
    return copies.to(this, target);
  }

  /** A copy of another dtype (rounded to nearest even), on this tensor's device; a new reference when it already is that dtype. */
  cast(dtype: DType): Tensor {
    return copies.cast(this, dtype);
  }

  cpu(): Tensor {
    return copies.to(this, "cpu");
  }

  /**
   * Copies `src` (same shape, any dtype, device and strides) into this
   * tensor, converting to this tensor's dtype; a `src` sharing memory with it
   * is copied out first.
   */
  copyFrom(src: Tensor): void {
    copies.copyFrom(this, src);
  }

  /** Sets every element to `value` (rounded to the dtype). */
  fill(value: number): this {
    copies.fill(this, value);
    return this;
  }

  /** this += alpha * other, in place (same shape and device; any strides). */
  add_(other: Tensor, alpha = 1): this {
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

  // ---- lifetime ----

  /** Releases this tensor's reference to its memory; later use throws. Idempotent. */
  dispose(): void {
    if (this.isDisposed) return;
    this.isDisposed = true;
    this.storage.release();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** Throws a clear error if this tensor has been disposed. */
  assertLive(operation: string): void {
    if (this.isDisposed) throw disposedError(`${operation}: the tensor`);
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

export function disposedError(what: string): LLTMError {
  return new LLTMError("DISPOSED", `${what} has been disposed`);
}

/** A device from user input (a Device or its name). */
export function deviceOf(device: DeviceLike | undefined): Device {
  return Device.of(device ?? "cpu");
}
