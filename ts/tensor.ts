/**
 * Tensor: a strided view of native memory on the CPU or a CUDA device, of
 * float32 or float64 elements. Views (transpose, narrow, expand, reshape of a
 * contiguous tensor) share memory with their source; every tensor must be
 * disposed (or used with `using`), and the memory is freed when the last
 * tensor viewing it is disposed. A finalizer frees what is forgotten.
 */
import { Device, type DeviceLike } from "./device.ts";
import { type DType, isDType, itemSize, typedArray } from "./dtype.ts";
import { LLTMError } from "./errors.ts";
import { denoInspect, formatTensor, nodeInspect } from "./inspect.ts";
import { MAX_DIMS } from "./native/constants.ts";
import * as native from "./native/index.ts";
import { Random } from "./random.ts";
import { Storage } from "./storage.ts";

export interface TensorOptions {
  dtype?: DType;
  device?: DeviceLike;
}

export interface RandomOptions extends TensorOptions {
  /** Seed of the generator; the same seed gives the same values on every runtime. */
  seed?: number;
}

export type NestedArray = number | NestedArray[];

export class Tensor implements native.NativeTensor {
  /** Unique in the process: the native layer keeps descriptors of the views it has seen by it. */
  readonly id: number = native.newDescribableId();
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  /** Offset of the first element from the start of the storage, in elements. */
  readonly offset: number;
  private readonly storage: Storage;
  private isDisposed = false;
  readonly dtype: DType;

  /** Wraps `storage`, taking over one of its references. Use the factories instead. */
  constructor(storage: Storage, dtype: DType, shape: readonly number[], strides: readonly number[], offset = 0) {
    this.storage = storage;
    this.dtype = dtype;
    this.shape = shape;
    this.strides = strides;
    this.offset = offset;
  }

  // ---- factories ----

  /** A tensor with uninitialised contents. */
  static empty(shape: readonly number[], options: TensorOptions = {}): Tensor {
    const dtype = checkDType(options.dtype ?? "float32");
    const device = Device.of(options.device ?? "cpu");
    const dims = checkShape(shape, "shape");
    const storage = Storage.allocate(byteCount(dims, dtype), device);
    return new Tensor(storage, dtype, dims, contiguousStrides(dims));
  }

  static zeros(shape: readonly number[], options: TensorOptions = {}): Tensor {
    return Tensor.full(shape, 0, options);
  }

  static ones(shape: readonly number[], options: TensorOptions = {}): Tensor {
    return Tensor.full(shape, 1, options);
  }

  static full(shape: readonly number[], value: number, options: TensorOptions = {}): Tensor {
    const t = Tensor.empty(shape, options);
    t.fill(value);
    return t;
  }

  /** A copy of `data` (its dtype follows the array), viewed with `shape` (default: 1-D). */
  static fromTypedArray(
    data: Float32Array | Float64Array,
    shape: readonly number[] = [data.length],
    options: { device?: DeviceLike } = {},
  ): Tensor {
    if (!(data instanceof Float32Array || data instanceof Float64Array)) {
      throw new LLTMError("INVALID_ARGUMENT", "fromTypedArray: data must be a Float32Array or a Float64Array");
    }
    const dtype: DType = data instanceof Float32Array ? "float32" : "float64";
    const dims = checkShape(shape, "shape");
    if (numelOf(dims) !== data.length) {
      throw new LLTMError(
        "INVALID_ARGUMENT",
        `fromTypedArray: shape [${dims.join(", ")}] holds ${numelOf(dims)} elements but data has ${data.length}`,
      );
    }
    const t = Tensor.empty(dims, { dtype, device: options.device });
    try {
      native.write("fromTypedArray", t, data);
    } catch (e) {
      t.dispose();
      throw e;
    }
    return t;
  }

  /** A tensor from nested arrays of numbers, e.g. [[1, 2], [3, 4]]. */
  static fromArray(data: NestedArray, options: TensorOptions = {}): Tensor {
    const shape: number[] = [];
    for (let level: NestedArray = data; Array.isArray(level); level = level[0]!) {
      if (level.length === 0) throw new LLTMError("INVALID_ARGUMENT", "fromArray: arrays must not be empty");
      shape.push(level.length);
    }
    if (shape.length === 0) throw new LLTMError("INVALID_ARGUMENT", "fromArray: data must be an array");
    const dtype = checkDType(options.dtype ?? "float32");
    const flat = typedArray(dtype, numelOf(checkShape(shape, "fromArray: shape")));
    let n = 0;
    const walk = (value: NestedArray, depth: number) => {
      if (depth === shape.length) {
        if (typeof value !== "number") throw new LLTMError("INVALID_ARGUMENT", "fromArray: ragged or non-numeric data");
        flat[n++] = value;
        return;
      }
      if (!Array.isArray(value) || value.length !== shape[depth]) {
        throw new LLTMError("INVALID_ARGUMENT", `fromArray: ragged data at depth ${depth}; expected ${shape[depth]} items`);
      }
      for (const v of value) walk(v, depth + 1);
    };
    walk(data, 0);
    return Tensor.fromTypedArray(flat, shape, { device: options.device });
  }

  /** Standard normal values from a seeded generator. */
  static randn(shape: readonly number[], options: RandomOptions = {}): Tensor {
    const rng = new Random(options.seed ?? 0);
    return Tensor.generate(shape, options, () => rng.normal());
  }

  /** Uniform values in [low, high) from a seeded generator. */
  static rand(shape: readonly number[], options: RandomOptions & { low?: number; high?: number } = {}): Tensor {
    const rng = new Random(options.seed ?? 0);
    const low = options.low ?? 0, high = options.high ?? 1;
    return Tensor.generate(shape, options, () => low + (high - low) * rng.uniform());
  }

  private static generate(shape: readonly number[], options: TensorOptions, next: () => number): Tensor {
    const dtype = checkDType(options.dtype ?? "float32");
    const dims = checkShape(shape, "shape");
    const values = typedArray(dtype, byteCount(dims, dtype) / itemSize(dtype));
    for (let i = 0; i < values.length; i++) values[i] = next();
    return Tensor.fromTypedArray(values, dims, { device: options.device });
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
    return this.storage.address + this.offset * itemSize(this.dtype);
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

  // ---- views ----

  /** Swaps two dimensions (by default the two of a matrix). */
  transpose(dim0 = 0, dim1 = 1): Tensor {
    this.assertLive("transpose");
    const a = this.checkDim(dim0, "transpose"), b = this.checkDim(dim1, "transpose");
    const shape = [...this.shape], strides = [...this.strides];
    [shape[a], shape[b]] = [shape[b]!, shape[a]!];
    [strides[a], strides[b]] = [strides[b]!, strides[a]!];
    return this.view(shape, strides, this.offset);
  }

  /** `length` elements of dimension `dim` from `start`. */
  narrow(dim: number, start: number, length: number): Tensor {
    this.assertLive("narrow");
    const d = this.checkDim(dim, "narrow");
    const size = this.shape[d]!;
    if (!Number.isInteger(start) || !Number.isInteger(length) || start < 0 || length < 1 || start + length > size) {
      throw new LLTMError(
        "INVALID_ARGUMENT",
        `narrow: start ${start} and length ${length} must select at least one of the ${size} elements of dimension ${d}`,
      );
    }
    const shape = [...this.shape];
    shape[d] = length;
    return this.view(shape, this.strides, this.offset + start * this.strides[d]!);
  }

  /** Elements [start, end) of dimension `dim`, with an optional step. */
  slice(dim: number, start: number, end?: number, step = 1): Tensor {
    this.assertLive("slice");
    const d = this.checkDim(dim, "slice");
    const stop = end ?? this.shape[d]!;
    if (!Number.isInteger(step) || step < 1) {
      throw new LLTMError("INVALID_ARGUMENT", `slice: step must be a positive integer, got ${step}`);
    }
    const narrowed = this.narrow(d, start, stop - start);
    if (step === 1) return narrowed;
    const shape = [...narrowed.shape], strides = [...narrowed.strides];
    shape[d] = Math.ceil(shape[d]! / step);
    strides[d] = strides[d]! * step;
    const stepped = narrowed.view(shape, strides, narrowed.offset);
    narrowed.dispose();
    return stepped;
  }

  /** The same elements with another shape: a view of a contiguous tensor, else a contiguous copy. */
  reshape(shape: readonly number[]): Tensor {
    this.assertLive("reshape");
    const dims = checkShape(shape, "reshape: shape");
    if (numelOf(dims) !== this.numel) {
      throw new LLTMError(
        "INVALID_ARGUMENT",
        `reshape: shape [${dims.join(", ")}] holds ${numelOf(dims)} elements but the tensor has ${this.numel}`,
      );
    }
    if (this.isContiguous()) return this.view(dims, contiguousStrides(dims), this.offset);
    const copy = this.contiguous();
    const result = copy.view(dims, contiguousStrides(dims), copy.offset);
    copy.dispose();
    return result;
  }

  /** Broadcasts dimensions of size 1 (and new leading dimensions) to `shape`, with stride 0. */
  expand(shape: readonly number[]): Tensor {
    this.assertLive("expand");
    const dims = checkShape(shape, "expand: shape");
    const lead = dims.length - this.ndim;
    if (lead < 0) {
      throw new LLTMError("INVALID_ARGUMENT", `expand: shape [${dims.join(", ")}] has fewer dimensions than the tensor`);
    }
    const strides = dims.map((size, i) => {
      if (i < lead) return 0;
      const own = this.shape[i - lead]!;
      if (own === size) return this.strides[i - lead]!;
      if (own === 1) return 0;
      throw new LLTMError(
        "INVALID_ARGUMENT",
        `expand: dimension ${i - lead} of size ${own} cannot be expanded to ${size} (only size 1 can)`,
      );
    });
    return this.view(dims, strides, this.offset);
  }

  // ---- copies ----

  /** This tensor if it is contiguous (as a new reference), else a contiguous copy. */
  contiguous(): Tensor {
    this.assertLive("contiguous");
    if (this.isContiguous()) return this.view(this.shape, this.strides, this.offset);
    return this.clone();
  }

  /**
   * Another reference to this very view, disposed on its own: it keeps the
   * memory alive after this tensor is disposed (as autograd keeps a saved input).
   */
  retain(): Tensor {
    this.assertLive("retain");
    return this.view(this.shape, this.strides, this.offset);
  }

  /** A contiguous copy, on `device` (default: this tensor's). */
  clone(device?: DeviceLike): Tensor {
    this.assertLive("clone");
    const out = Tensor.empty(this.shape, { dtype: this.dtype, device: device ?? this.device });
    out.copyFrom(this);
    return out;
  }

  /** A copy on another device; this tensor itself (as a new reference) if it is already there. */
  to(device: DeviceLike): Tensor {
    this.assertLive("to");
    const target = Device.of(device);
    if (target.equals(this.device)) return this.view(this.shape, this.strides, this.offset);
    return this.clone(target);
  }

  cpu(): Tensor {
    return this.to("cpu");
  }

  /**
   * Copies `src` (same shape, same dtype, any device and strides) into this
   * tensor; a `src` sharing memory with it is copied out first.
   */
  copyFrom(src: Tensor): void {
    this.assertLive("copyFrom");
    checkOperand("copyFrom", "src", src, this, false);
    if (this.sharesMemoryWith(src)) {
      using staged = src.clone();
      native.copy("copyFrom", this, staged);
      return;
    }
    native.copy("copyFrom", this, src);
  }

  /** Sets every element to `value`. */
  fill(value: number): this {
    this.assertLive("fill");
    native.fill("fill", this, value);
    return this;
  }

  /** this += alpha * other, in place (same shape, dtype and device; any strides). */
  add_(other: Tensor, alpha = 1): this {
    this.assertLive("add_");
    checkOperand("add_", "other", other, this, true);
    if (this.sharesMemoryWith(other)) {
      using staged = other.clone();
      native.axpy("add_", this, alpha, staged);
      return this;
    }
    native.axpy("add_", this, alpha, other);
    return this;
  }

  /** The elements in row-major order, copied to the host (after the device's queued work). */
  toTypedArray(): Float32Array | Float64Array {
    this.assertLive("toTypedArray");
    // The host array first: a view too large for one (an expand to 2^40) must fail before
    // clone() asks the allocator for its bytes, which a machine with overcommit grants and then kills.
    const out = typedArray(this.dtype, this.numel);
    const source = this.isContiguous() ? this : this.clone();
    try {
      native.read("toTypedArray", out, source);
      return out;
    } finally {
      if (source !== this) source.dispose();
    }
  }

  /** The elements as nested arrays of numbers. */
  toArray(): NestedArray {
    const flat = this.toTypedArray();
    let i = 0;
    const build = (d: number): NestedArray => {
      if (d === this.shape.length - 1) {
        const row = Array.from(flat.subarray(i, i + this.shape[d]!));
        i += this.shape[d]!;
        return row;
      }
      return Array.from({ length: this.shape[d]! }, () => build(d + 1));
    };
    return build(0);
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

  /**
   * Whether a native call writing this tensor from `other` could read what it
   * has already written: they share bytes, and are not the very same elements
   * (which an elementwise call reads before writing).
   */
  private sharesMemoryWith(other: Tensor): boolean {
    if (other.storage !== this.storage) return false;
    if (other.offset === this.offset && sameShape(other.strides, this.strides)) return false;
    return native.overlaps(this, other, itemSize(this.dtype));
  }

  private view(shape: readonly number[], strides: readonly number[], offset: number): Tensor {
    this.storage.retain();
    return new Tensor(this.storage, this.dtype, [...shape], [...strides], offset);
  }

  private checkDim(dim: number, operation: string): number {
    const d = dim < 0 ? dim + this.ndim : dim;
    if (!Number.isInteger(d) || d < 0 || d >= this.ndim) {
      throw new LLTMError("INVALID_ARGUMENT", `${operation}: dimension ${dim} is out of range for a ${this.ndim}-D tensor`);
    }
    return d;
  }
}

/**
 * Contiguous tensors of given shapes in one block of memory, each 64-byte
 * aligned: the outputs of an op, made with one allocation. The layout is
 * computed once; the tensors of every block share its shape and stride
 * arrays (views never change them), so the native layer sees the same
 * arrays again and rewrites only the data address of a descriptor.
 */
export class GroupLayout {
  readonly dtype: DType;
  private readonly shapes: readonly (readonly number[])[];
  private readonly strides: readonly (readonly number[])[];
  private readonly offsets: readonly number[];
  private readonly bytes: number;

  constructor(shapes: readonly (readonly number[])[], dtype: DType) {
    const size = itemSize(dtype);
    const align = 64 / size;
    const offsets: number[] = [];
    let total = 0;
    for (const shape of shapes) {
      offsets.push(total);
      total += Math.ceil(numelOf(shape) / align) * align;
    }
    if (total * size > Number.MAX_SAFE_INTEGER) throw tooLarge("outputs", total, dtype);
    this.dtype = dtype;
    this.shapes = shapes.map((s) => [...s]);
    this.strides = this.shapes.map(contiguousStrides);
    this.offsets = offsets;
    this.bytes = total * size;
  }

  /** A new block on `device` and its tensors, in the order of the shapes. */
  allocate(device: Device): Tensor[] {
    const n = this.offsets.length;
    const storage = Storage.allocate(this.bytes, device, n);
    const out = new Array<Tensor>(n);
    for (let i = 0; i < n; i++) out[i] = new Tensor(storage, this.dtype, this.shapes[i]!, this.strides[i]!, this.offsets[i]);
    return out;
  }
}

export function disposedError(what: string): LLTMError {
  return new LLTMError("DISPOSED", `${what} has been disposed`);
}

export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d]!;
  }
  return strides;
}

export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function numelOf(shape: readonly number[]): number {
  let n = 1;
  for (const s of shape) n *= s;
  return n;
}

/** The bytes of a contiguous tensor of `shape`, refused by name when they are beyond what can be allocated. */
function byteCount(shape: readonly number[], dtype: DType): number {
  const n = numelOf(shape);
  if (n * itemSize(dtype) > Number.MAX_SAFE_INTEGER) throw tooLarge(`shape [${shape.join(", ")}]`, n, dtype);
  return n * itemSize(dtype);
}

function tooLarge(what: string, elements: number, dtype: DType): LLTMError {
  return new LLTMError(
    "INVALID_ARGUMENT",
    `${what} holds ${elements} ${dtype} elements: ${elements * itemSize(dtype)} bytes, more than the ` +
      `${Number.MAX_SAFE_INTEGER} bytes a tensor can have`,
  );
}

/** That `t` is a live Tensor of `self`'s dtype (and, for an elementwise op, its device). */
function checkOperand(fn: string, name: string, t: Tensor, self: Tensor, sameDevice: boolean): void {
  if (!(t instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: '${name}' must be a Tensor`);
  if (t.disposed) throw disposedError(`${fn}: '${name}'`);
  if (t.dtype !== self.dtype) {
    throw new LLTMError("INVALID_DTYPE", `${fn}: '${name}' has dtype ${t.dtype} but this tensor has ${self.dtype}`);
  }
  if (sameDevice && t.device !== self.device) {
    throw new LLTMError("INVALID_DEVICE", `${fn}: '${name}' is on ${t.device} but this tensor is on ${self.device}`);
  }
}

function checkShape(shape: readonly number[], what: string): number[] {
  if (!Array.isArray(shape) || shape.length < 1 || shape.length > MAX_DIMS) {
    throw new LLTMError("INVALID_ARGUMENT", `${what} must have 1 to ${MAX_DIMS} dimensions, got ${JSON.stringify(shape)}`);
  }
  for (const s of shape) {
    if (!Number.isSafeInteger(s) || s < 1) {
      throw new LLTMError("INVALID_ARGUMENT", `${what} must hold positive integer sizes, got [${shape.join(", ")}]`);
    }
  }
  return [...shape];
}

function checkDType(dtype: unknown): DType {
  if (!isDType(dtype)) {
    throw new LLTMError("INVALID_DTYPE", `dtype must be "float32" or "float64", got ${JSON.stringify(dtype)}`);
  }
  return dtype;
}
