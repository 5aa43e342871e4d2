/**
 * Every call into liblltm. An op runs through lltm_run with one lltm_call
 * block per op in native memory (a tensor passed again in the same slot, as
 * weights are step after step, is not described again); the call's device
 * comes from its first tensor (the caller has checked that the others
 * agree), and a failure becomes an LLTMError through unwrap.
 */
import type { Device } from "../device.ts";
import { LLTMError } from "../errors.ts";
import {
  backendBit, CALL_BYTES, dtypeTable, type ElementType, layoutConstants, matmulPrecisionCode, MAX_SCALARS, memoryStatCode,
} from "./constants.ts";
import { type Describable, Descriptors, hostBlock } from "./descriptor.ts";
import { native, type NativeLibrary } from "./library.ts";
import type { Op } from "./op.ts";
import { type ArgumentNames, unwrap } from "./status.ts";

/** What a native call needs of a tensor. */
export interface NativeTensor extends Describable {
  readonly device: Device;
}

const word = (field: string) => layoutConstants[`offsetof(lltm_call, ${field})` as keyof typeof layoutConstants] / 4;
const DEVICE_KIND = word("device_kind"), DEVICE_INDEX = word("device_index");
const SRC_KIND = word("src_device_kind"), SRC_INDEX = word("src_device_index");
const FLAGS = word("flags"), GIVEN = word("given");
const SCALARS = layoutConstants["offsetof(lltm_call, scalars)"] / 8;
const TENSORS = word("tensors");

/** Where an lltm_call's fields lie, in 32-bit words (SCALARS: in float64s), for the blocks of other entry points. */
export const callLayout = { DEVICE_KIND, DEVICE_INDEX, FLAGS, GIVEN, SCALARS, TENSORS } as const;

/** An op's lltm_call in native memory. */
interface CallBlock {
  base: number;
  words: Int32Array;
  scalars: Float64Array;
  tensors: Descriptors;
}

let lib: NativeLibrary | undefined;
const blocks: (CallBlock | undefined)[] = [];

function library(): NativeLibrary {
  return (lib ??= native());
}

function openBlock(o: Op): CallBlock {
  const { address, words } = hostBlock(CALL_BYTES, `the call block of ${o.spec.entry}`);
  const block = {
    base: address,
    words,
    scalars: new Float64Array(words.buffer, words.byteOffset, CALL_BYTES / 8),
    tensors: new Descriptors(words, TENSORS, address + TENSORS * 4, o.spec.slots.length),
  };
  blocks[o.code] = block;
  return block;
}

/** The bytes of a BYTES slot's tensor (a contiguous 1-D buffer). */
function byteLength(t: NativeTensor): number {
  return t.shape[0]! * dtypeTable[t.dtype].bytes;
}

/**
 * Writes `tensors` then `more` (by slot, `more` from slot tensors.length on;
 * undefined: absent), `flags` and `scalars` into op `o`'s block; the tensors'
 * device is that of the first one given.
 */
function fill(
  o: Op, tensors: readonly (NativeTensor | undefined)[], flags: number, scalars: readonly number[] | undefined,
  more?: readonly NativeTensor[],
): CallBlock {
  const b = blocks[o.code] ?? openBlock(o), d = b.tensors, bytes = o.byteSlots;
  let given = 0, device: Device | undefined;
  const n = tensors.length, all = more === undefined ? n : n + more.length;
  for (let i = 0; i < all; i++) {
    const t = i < n ? tensors[i] : more![i - n];
    if (t === undefined) continue;
    given |= 1 << i;
    if (bytes[i]) d.writeBytes(i, t, byteLength(t));
    else d.write(i, t);
    device ??= t.device;
  }
  const w = b.words;
  if (device !== undefined) {
    const src = o.srcSlot >= 0 ? tensors[o.srcSlot]?.device ?? device : device;
    w[DEVICE_KIND] = device.kindCode;
    w[DEVICE_INDEX] = device.index;
    w[SRC_KIND] = src.kindCode;
    w[SRC_INDEX] = src.index;
  }
  w[FLAGS] = flags;
  w[GIVEN] = given;
  if (scalars !== undefined) {
    if (scalars.length > MAX_SCALARS) throw new LLTMError("INTERNAL", `${o.spec.entry}: ${scalars.length} scalars`);
    for (let i = 0; i < scalars.length; i++) b.scalars[SCALARS + i] = scalars[i]!;
  }
  return b;
}

/** lltm_run calls made so far, by op code: what tests count an optimizer's or a clip's launches by. */
const runs: number[] = [];

/** How many times op `o` has been run in this process. */
export function runCount(o: Op): number {
  return runs[o.code] ?? 0;
}

/**
 * Runs op `o` (lltm_run) on `tensors` in the order of its slots (undefined
 * for an absent optional one), with `flags` and `scalars` in the order of its
 * LLTM_SCALARs; `fn` and `renamed` name things in the error of a refusal.
 */
export function run(
  o: Op, fn: string, tensors: readonly (NativeTensor | undefined)[], flags = 0, scalars?: readonly number[], renamed?: ArgumentNames,
): void {
  const b = fill(o, tensors, flags, scalars);
  runs[o.code] = (runs[o.code] ?? 0) + 1;
  unwrap(library().lltm_run(o.code, b.base), fn, renamed);
}

/** run() of an op whose slots are `ins` then `outs`, without joining them. */
export function runInto(o: Op, fn: string, ins: readonly (NativeTensor | undefined)[], outs: readonly NativeTensor[], flags = 0): void {
  const b = fill(o, ins, flags, undefined, outs);
  runs[o.code] = (runs[o.code] ?? 0) + 1;
  unwrap(library().lltm_run(o.code, b.base), fn);
}

const answered = new Uint32Array(2);

/**
 * The bytes op `o`'s BYTES slot needs (lltm_buffer_bytes) for `tensors`:
 * those the op's sizes are read from are enough.
 */
export function bufferBytes(
  o: Op, fn: string, tensors: readonly (NativeTensor | undefined)[], flags = 0, scalars?: readonly number[],
): number {
  const b = fill(o, tensors, flags, scalars);
  unwrap(library().lltm_buffer_bytes(o.code, b.base, answered), fn);
  return answered[0]! + answered[1]! * 4294967296;
}

const allocated = new Uint32Array(2);

/** Refuses a byte count the allocators cannot take, naming the public function `fn`. */
function checkAllocBytes(fn: string, bytes: number): void {
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: ${bytes} bytes cannot be allocated: a size must be a positive integer below 2^53`);
  }
}

/** The address an allocator stored in `allocated`. */
function allocatedAddress(): number {
  return allocated[0]! + allocated[1]! * 4294967296;
}

/** Allocates `bytes` bytes on `device` (lltm_alloc, 64-byte aligned) for the public function `fn`; its address. */
export function alloc(fn: string, bytes: number, device: Device): number {
  checkAllocBytes(fn, bytes);
  unwrap(library().lltm_alloc(bytes, device.kindCode, device.index, allocated), fn);
  return allocatedAddress();
}

/** Frees what alloc returned; a failure (only possible on a broken device) is not reported, as by C's free. */
export function free(address: number, device: Device): void {
  library().lltm_free(address, device.kindCode, device.index);
}

/** Allocates `bytes` bytes of pinned host memory (lltm_alloc_pinned) for the public function `fn`; its address. */
export function allocPinned(fn: string, bytes: number): number {
  checkAllocBytes(fn, bytes);
  unwrap(library().lltm_alloc_pinned(bytes, allocated), fn);
  return allocatedAddress();
}

/** Frees what allocPinned returned (not reported on failure, as free). */
export function freePinned(address: number): void {
  library().lltm_free_pinned(address);
}

/** lltm_read: the bytes of contiguous `src` into `out` (as many as `out` holds), after the device's queued work. */
export function read(fn: string, out: ArrayBufferView, src: NativeTensor): void {
  const device = src.device;
  unwrap(library().lltm_read(out, src.dataAddress, out.byteLength, device.kindCode, device.index), fn);
}

/** lltm_write: `data` into contiguous `dst` (as many bytes as `data` holds). */
export function write(fn: string, dst: NativeTensor, data: ArrayBufferView): void {
  const device = dst.device;
  unwrap(library().lltm_write(dst.dataAddress, data, data.byteLength, device.kindCode, device.index), fn);
}

/** lltm_synchronize: waits for the device's queued work. */
export function synchronize(fn: string, device: Device): void {
  unwrap(library().lltm_synchronize(device.kindCode, device.index), fn);
}

const counted = new Uint32Array(2);

/** lltm_memory_stat: one of the device's memory counters, in bytes. */
export function memoryStat(fn: string, stat: keyof typeof memoryStatCode, device: Device): number {
  unwrap(library().lltm_memory_stat(memoryStatCode[stat], device.kindCode, device.index, counted), fn);
  return counted[0]! + counted[1]! * 4294967296;
}

/** lltm_memory_reset_peak: the device's peak of allocated bytes set to what is allocated now. */
export function resetPeakMemory(fn: string, device: Device): void {
  unwrap(library().lltm_memory_reset_peak(device.kindCode, device.index), fn);
}

const graphHandle = new Uint32Array(2);

/** lltm_capture_begin: records, rather than runs, this thread's work on the device's stream from now on. */
export function captureBegin(fn: string, device: Device): void {
  unwrap(library().lltm_capture_begin(device.kindCode, device.index), fn);
}

/** lltm_capture_end: the recorded work as a graph (its handle). */
export function captureEnd(fn: string, device: Device): number {
  graphHandle.fill(0);
  unwrap(library().lltm_capture_end(device.kindCode, device.index, graphHandle), fn);
  return graphHandle[0]! + graphHandle[1]! * 4294967296;
}

/** lltm_graph_replay: queues a captured graph's work on its device's stream. */
export function graphReplay(fn: string, graph: number, device: Device): void {
  unwrap(library().lltm_graph_replay(graph, device.kindCode, device.index), fn);
}

/** lltm_graph_destroy: waits for the graph's replays and frees it with the memory it kept. */
export function graphDestroy(fn: string, graph: number, device: Device): void {
  unwrap(library().lltm_graph_destroy(graph, device.kindCode, device.index), fn);
}

/** Number of CUDA devices (0 without the CUDA backend or a GPU). */
export function cudaDeviceCount(): number {
  return library().lltm_cuda_device_count();
}

/** How float32 matrix products may round, process-wide (lltm_set_float32_matmul_precision). */
export type Float32MatmulPrecision = keyof typeof matmulPrecisionCode;

export function setFloat32MatmulPrecision(precision: Float32MatmulPrecision, fn: string): void {
  unwrap(library().lltm_set_float32_matmul_precision(matmulPrecisionCode[precision]), fn);
}

export function float32MatmulPrecision(): Float32MatmulPrecision {
  const code = library().lltm_float32_matmul_precision();
  const name = (Object.keys(matmulPrecisionCode) as Float32MatmulPrecision[]).find((k) => matmulPrecisionCode[k] === code);
  if (name === undefined) throw new LLTMError("INTERNAL", `lltm_float32_matmul_precision answered ${code}, which is no precision`);
  return name;
}

/** Bytes per element of an element type. */
export function elementBytes(type: ElementType): number {
  return dtypeTable[type].bytes;
}

/**
 * The library in use: its path, C ABI version, the backends this build and
 * machine have, the CPU kernels chosen at load and the CPU thread count with
 * where it came from; throws the library's reason
 * when LLTM_CPU_KERNELS forces kernels this machine cannot run.
 */
export interface LibraryInfo {
  path: string;
  abiVersion: number;
  cpu: boolean;
  cuda: boolean;
  cudaDevices: number;
  /** How the CUDA backend computes products: with cuBLAS, or its own kernels (cuBLAS not found); undefined without the backend. */
  cudaBlas: "cublas" | "own" | undefined;
  cpuKernels: string;
  threads: number;
  threadsSource: ThreadsSource;
}

export function libraryInfo(): LibraryInfo {
  const l = library();
  const bits = l.lltm_backends();
  const cpuKernels = l.lltm_cpu_kernels();
  if (cpuKernels === "") throw new LLTMError("BACKEND_UNAVAILABLE", l.lltm_last_error());
  return {
    path: l.path,
    abiVersion: l.lltm_abi_version(),
    cpu: (bits & backendBit.cpu) !== 0,
    cuda: (bits & backendBit.cuda) !== 0,
    cudaDevices: l.lltm_cuda_device_count(),
    cudaBlas: (l.lltm_cuda_blas() || undefined) as LibraryInfo["cudaBlas"],
    cpuKernels,
    threads: l.lltm_cpu_threads(),
    threadsSource: l.lltm_cpu_threads_source() as ThreadsSource,
  };
}

/** Where the CPU backend's thread count came from (lltm_cpu_threads_source). */
export type ThreadsSource = "environment" | "affinity" | "cgroup" | "hardware";
