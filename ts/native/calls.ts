/**
 * Every call into liblltm, one function per C entry point. Each call's
 * descriptors go into a block of its own (so a tensor passed again in the
 * same position, as weights are step after step, is not described again),
 * its dtype and device come from its first tensor (the caller has checked
 * that the others agree), and a failure becomes an LLTMError through unwrap.
 */
import type { Device } from "../device.ts";
import type { DType } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import { ACCUMULATE_PARAM_GRADS, backendBit, dtypeCode, SEQUENCE_TRAINING } from "./constants.ts";
import { type Describable, DescriptorBlock } from "./descriptor.ts";
import { native, type NativeLibrary } from "./library.ts";
import { type ArgumentNames, unwrap } from "./status.ts";

/** What a native call needs of a tensor. */
export interface NativeTensor extends Describable {
  readonly dtype: DType;
  readonly device: Device;
}

interface Calls {
  lib: NativeLibrary;
  forward: DescriptorBlock;
  backward: DescriptorBlock;
  copy: DescriptorBlock;
  fill: DescriptorBlock;
  axpy: DescriptorBlock;
  sgd: DescriptorBlock;
  adam: DescriptorBlock;
  sequenceReserve: DescriptorBlock;
  sequenceForward: DescriptorBlock;
  sequenceBackward: DescriptorBlock;
}

let calls: Calls | undefined;

function open(): Calls {
  calls = {
    lib: native(),
    forward: new DescriptorBlock(12, 3),
    backward: new DescriptorBlock(14, 4),
    copy: new DescriptorBlock(2),
    fill: new DescriptorBlock(1),
    axpy: new DescriptorBlock(2),
    sgd: new DescriptorBlock(3),
    adam: new DescriptorBlock(4),
    // The sequence calls' _v forms: the sizes and the bytes answered; the reserve's address and size.
    sequenceReserve: new DescriptorBlock(0, 3, 5),
    sequenceForward: new DescriptorBlock(8, 4, 2),
    sequenceBackward: new DescriptorBlock(11, 5, 2),
  };
  return calls;
}

const allocated = new Uint32Array(2);
const allocDevice = new Int32Array(2);

/** Allocates `bytes` bytes on `device` (lltm_alloc, 64-byte aligned); its address. */
export function alloc(bytes: number, device: Device): number {
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new LLTMError("INVALID_ARGUMENT", `alloc: bytes must be a positive integer below 2^53, got ${bytes}`);
  }
  const c = calls ?? open();
  allocDevice[0] = device.kindCode;
  allocDevice[1] = device.index;
  unwrap(c.lib.lltm_alloc_v(bytes, allocDevice, allocated), "alloc");
  return allocated[0]! + allocated[1]! * 4294967296;
}

/** Frees what alloc returned; a failure (only possible on a broken device) is not reported, as by C's free. */
export function free(address: number, device: Device): void {
  (calls ?? open()).lib.lltm_free(address, device.kindCode, device.index);
}

/**
 * lltm_forward (as lltm_forward_v: two addresses, however many tensors; a call
 * of node:ffi costs several times more from four arguments on): inputs (input,
 * weights, bias, oldH, oldCell) and the 7 outputs of csrc/lltm.h's order.
 */
export function forward(fn: string, ins: readonly NativeTensor[], outs: readonly NativeTensor[]): void {
  const c = calls ?? open(), d = c.forward, first = ins[0]!, device = first.device;
  for (let i = 0; i < 5; i++) d.write(i, ins[i]!);
  for (let i = 0; i < 7; i++) d.write(5 + i, outs[i]!);
  d.code(0, dtypeCode[first.dtype]);
  d.code(1, device.kindCode);
  d.code(2, device.index);
  unwrap(c.lib.lltm_forward_v(d.base, d.codes), fn);
}

/**
 * lltm_backward_ex: the 9 inputs and 5 outputs of csrc/lltm.h's order; with
 * `accumulate`, the weights' and bias' gradients are added to outs[2] and outs[3].
 */
export function backward(fn: string, ins: readonly NativeTensor[], outs: readonly NativeTensor[], accumulate: boolean): void {
  const c = calls ?? open(), d = c.backward, first = ins[0]!, device = first.device;
  for (let i = 0; i < 9; i++) d.write(i, ins[i]!);
  for (let i = 0; i < 5; i++) d.write(9 + i, outs[i]!);
  d.code(0, accumulate ? ACCUMULATE_PARAM_GRADS : 0);
  d.code(1, dtypeCode[first.dtype]);
  d.code(2, device.kindCode);
  d.code(3, device.index);
  unwrap(c.lib.lltm_backward_ex_v(d.base, d.codes), fn);
}

/**
 * lltm_sequence_reserve_bytes (as lltm_sequence_reserve_bytes_v, three
 * addresses): the bytes of a training forward's reserve for these sizes on `device`.
 */
export function sequenceReserveBytes(
  fn: string, steps: number, batch: number, features: number, state: number, dtype: DType, device: Device,
): number {
  const c = calls ?? open(), d = c.sequenceReserve;
  d.word(0, steps);
  d.word(1, batch);
  d.word(2, features);
  d.word(3, state);
  d.code(0, dtypeCode[dtype]);
  d.code(1, device.kindCode);
  d.code(2, device.index);
  unwrap(c.lib.lltm_sequence_reserve_bytes_v(d.words64, d.codes, d.words64 + 32), fn);
  return d.readWord(4);
}

/**
 * lltm_sequence_forward (as lltm_sequence_forward_v): inputs (inputs,
 * weights, bias, h0, c0) and outputs (outputs, lastH, lastCell) in
 * csrc/lltm.h's order; with a `reserve`, a training forward that keeps in it
 * what sequenceBackward needs.
 */
export function sequenceForward(
  fn: string, ins: readonly NativeTensor[], outs: readonly NativeTensor[], reserve: NativeTensor | undefined, reserveBytes: number,
): void {
  const c = calls ?? open(), d = c.sequenceForward, first = ins[0]!, device = first.device;
  for (let i = 0; i < 5; i++) d.write(i, ins[i]!);
  for (let i = 0; i < 3; i++) d.write(5 + i, outs[i]!);
  d.word(0, reserve ? reserve.dataAddress : 0);
  d.word(1, reserve ? reserveBytes : 0);
  d.code(0, reserve ? SEQUENCE_TRAINING : 0);
  d.code(1, dtypeCode[first.dtype]);
  d.code(2, device.kindCode);
  d.code(3, device.index);
  unwrap(c.lib.lltm_sequence_forward_v(d.base, d.words64, d.codes), fn);
}

/**
 * lltm_sequence_backward (as lltm_sequence_backward_v): the optional output
 * gradients (gradOutputs, gradLastH, gradLastCell; undefined means zeros),
 * the reserve, the inputs (inputs, weights, h0) and the outputs (dInputs,
 * dWeights, dBias, dH0, dC0) in csrc/lltm.h's order; with `accumulate`, the
 * weights' and bias' gradients are added to outs[1] and outs[2].
 */
export function sequenceBackward(
  fn: string, grads: readonly (NativeTensor | undefined)[], reserve: NativeTensor, reserveBytes: number,
  ins: readonly NativeTensor[], outs: readonly NativeTensor[], accumulate: boolean,
): void {
  const c = calls ?? open(), d = c.sequenceBackward, first = ins[0]!, device = first.device;
  let given = 0;
  for (let i = 0; i < 3; i++) {
    const g = grads[i];
    if (g) {
      d.write(i, g);
      given |= 1 << i;
    }
  }
  for (let i = 0; i < 3; i++) d.write(3 + i, ins[i]!);
  for (let i = 0; i < 5; i++) d.write(6 + i, outs[i]!);
  d.word(0, reserve.dataAddress);
  d.word(1, reserveBytes);
  d.code(0, accumulate ? ACCUMULATE_PARAM_GRADS : 0);
  d.code(1, dtypeCode[first.dtype]);
  d.code(2, device.kindCode);
  d.code(3, device.index);
  d.code(4, given);
  unwrap(c.lib.lltm_sequence_backward_v(d.base, d.words64, d.codes), fn);
}

const copyNames: ArgumentNames = { dst: "the tensor", src: "'src'" };

/** lltm_copy: `src` into `dst` (equal sizes and dtype), across devices. */
export function copy(fn: string, dst: NativeTensor, src: NativeTensor): void {
  const c = calls ?? open(), d = c.copy, to = dst.device, from = src.device;
  unwrap(
    c.lib.lltm_copy(d.write(0, dst), to.kindCode, to.index, d.write(1, src), from.kindCode, from.index, dtypeCode[dst.dtype]),
    fn,
    copyNames,
  );
}

const fillNames: ArgumentNames = { dst: "the tensor" };

/** lltm_fill: every element of `dst` set to `value`. */
export function fill(fn: string, dst: NativeTensor, value: number): void {
  const c = calls ?? open(), device = dst.device;
  unwrap(c.lib.lltm_fill(c.fill.write(0, dst), value, dtypeCode[dst.dtype], device.kindCode, device.index), fn, fillNames);
}

const axpyNames: ArgumentNames = { y: "the tensor", x: "'other'" };

/** lltm_axpy: y += alpha * x. */
export function axpy(fn: string, y: NativeTensor, alpha: number, x: NativeTensor): void {
  const c = calls ?? open(), d = c.axpy, device = y.device;
  unwrap(
    c.lib.lltm_axpy(d.write(0, y), alpha, d.write(1, x), dtypeCode[y.dtype], device.kindCode, device.index),
    fn,
    axpyNames,
  );
}

/** lltm_sgd_step; `momentumBuffer` may be omitted when momentum is 0. */
export function sgdStep(
  fn: string, param: NativeTensor, grad: NativeTensor, momentumBuffer: NativeTensor | undefined, lr: number, momentum: number,
): void {
  const c = calls ?? open(), d = c.sgd, device = param.device;
  unwrap(
    c.lib.lltm_sgd_step(
      d.write(0, param), d.write(1, grad), momentumBuffer ? d.write(2, momentumBuffer) : 0, lr, momentum,
      dtypeCode[param.dtype], device.kindCode, device.index,
    ),
    fn,
  );
}

/** lltm_adam_step; `step` counts from 1. */
export function adamStep(
  fn: string, param: NativeTensor, grad: NativeTensor, expAvg: NativeTensor, expAvgSq: NativeTensor,
  lr: number, beta1: number, beta2: number, eps: number, step: number,
): void {
  const c = calls ?? open(), d = c.adam, device = param.device;
  unwrap(
    c.lib.lltm_adam_step(
      d.write(0, param), d.write(1, grad), d.write(2, expAvg), d.write(3, expAvgSq), lr, beta1, beta2, eps, step,
      dtypeCode[param.dtype], device.kindCode, device.index,
    ),
    fn,
  );
}

/** lltm_read: the bytes of contiguous `src` into `out` (as many as `out` holds), after the device's queued work. */
export function read(fn: string, out: Float32Array | Float64Array, src: NativeTensor): void {
  const c = calls ?? open(), device = src.device;
  unwrap(c.lib.lltm_read(out, src.dataAddress, out.byteLength, device.kindCode, device.index), fn);
}

/** lltm_write: `data` into contiguous `dst` (as many bytes as `data` holds). */
export function write(fn: string, dst: NativeTensor, data: Float32Array | Float64Array): void {
  const c = calls ?? open(), device = dst.device;
  unwrap(c.lib.lltm_write(dst.dataAddress, data, data.byteLength, device.kindCode, device.index), fn);
}

/** lltm_synchronize: waits for the device's queued work. */
export function synchronize(fn: string, device: Device): void {
  const c = calls ?? open();
  unwrap(c.lib.lltm_synchronize(device.kindCode, device.index), fn);
}

/** Number of CUDA devices (0 without the CUDA backend or a GPU). */
export function cudaDeviceCount(): number {
  return (calls ?? open()).lib.lltm_cuda_device_count();
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
  cpuKernels: string;
  threads: number;
  threadsSource: ThreadsSource;
}

export function libraryInfo(): LibraryInfo {
  const lib = (calls ?? open()).lib;
  const bits = lib.lltm_backends();
  const cpuKernels = lib.lltm_cpu_kernels();
  if (cpuKernels === "") throw new LLTMError("BACKEND_UNAVAILABLE", lib.lltm_last_error());
  return {
    path: lib.path,
    abiVersion: lib.lltm_abi_version(),
    cpu: (bits & backendBit.cpu) !== 0,
    cuda: (bits & backendBit.cuda) !== 0,
    cudaDevices: lib.lltm_cuda_device_count(),
    cpuKernels,
    threads: lib.lltm_cpu_threads(),
    threadsSource: lib.lltm_cpu_threads_source() as ThreadsSource,
  };
}

/** Where the CPU backend's thread count came from (lltm_cpu_threads_source). */
export type ThreadsSource = "environment" | "affinity" | "cgroup" | "hardware";
