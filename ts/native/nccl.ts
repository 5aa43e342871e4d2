/**
 * The lltm_nccl_* entry points (csrc/lltm.h): NCCL's version, unique ids,
 * communicators and the collectives on them. A collective's tensors go in an
 * lltm_call block of its own (tensors[0] input, tensors[1] output).
 */
import type { Device } from "../device.ts";
import { callLayout, type NativeTensor } from "./calls.ts";
import { CALL_BYTES, headerConstants } from "./constants.ts";
import { Descriptors, hostBlock } from "./descriptor.ts";
import { native } from "./library.ts";
import { unwrap } from "./status.ts";

/** The collectives of lltm_collective. */
export type Collective = "allReduce" | "broadcast" | "allGather" | "reduceScatter";

const collectiveCode: Record<Collective, number> = {
  allReduce: headerConstants.LLTM_ALL_REDUCE,
  broadcast: headerConstants.LLTM_BROADCAST,
  allGather: headerConstants.LLTM_ALL_GATHER,
  reduceScatter: headerConstants.LLTM_REDUCE_SCATTER,
};

export const reduceOpCode = { sum: headerConstants.LLTM_REDUCE_SUM, mean: headerConstants.LLTM_REDUCE_MEAN } as const;

export const NCCL_UNIQUE_ID_BYTES = headerConstants.LLTM_NCCL_UNIQUE_ID_BYTES;

interface Block {
  base: number;
  words: Int32Array;
  scalars: Float64Array;
  tensors: Descriptors;
}

let block: Block | undefined;

function callBlock(): Block {
  if (block !== undefined) return block;
  const { address, words } = hostBlock(CALL_BYTES, "the call block of lltm_nccl_run");
  block = {
    base: address,
    words,
    scalars: new Float64Array(words.buffer, words.byteOffset, CALL_BYTES / 8),
    tensors: new Descriptors(words, callLayout.TENSORS, address + callLayout.TENSORS * 4, 2),
  };
  return block;
}

/** NCCL's version code (major * 10000 + minor * 100 + patch), opening NCCL; `fn` names the refusal where it is missing. */
export function ncclVersion(fn: string): number {
  const out = new Int32Array(1);
  unwrap(native().lltm_nccl_version(out), fn);
  return out[0]!;
}

/** A new unique id, for the rank that starts a communicator to pass to the others. */
export function ncclUniqueId(fn: string): Uint8Array {
  const id = new Uint8Array(NCCL_UNIQUE_ID_BYTES);
  unwrap(native().lltm_nccl_unique_id(id), fn);
  return id;
}

/** Joins the communicator of `id` (blocks until every rank has); its handle. */
export function ncclCommInit(fn: string, id: Uint8Array, worldSize: number, rank: number, device: Device): number {
  const handle = new Uint32Array(2);
  unwrap(native().lltm_nccl_comm_init(handle, id, worldSize, rank, device.index), fn);
  return handle[0]! + handle[1]! * 4294967296;
}

export function ncclCommDestroy(fn: string, comm: number, abort: boolean): void {
  unwrap(native().lltm_nccl_comm_destroy(comm, abort ? 1 : 0), fn);
}

/** Throws NCCL's message when the communicator's queued work failed. */
export function ncclCommError(fn: string, comm: number): void {
  unwrap(native().lltm_nccl_comm_error(comm), fn);
}

/** Makes the device's stream wait for the communicator's collectives queued with `overlap`. */
export function ncclJoin(fn: string, comm: number): void {
  unwrap(native().lltm_nccl_join(comm), fn);
}

/**
 * Queues `collective` on the communicator's device; `scalar` is the reduce op's code, or the broadcast's root.
 * With `overlap`, on the communicator's own stream, concurrent with the device's later work until ncclJoin.
 */
export function ncclRun(
  fn: string, comm: number, collective: Collective, input: NativeTensor, output: NativeTensor, scalar: number, overlap = false,
): void {
  const b = callBlock();
  b.tensors.write(0, input);
  b.tensors.write(1, output);
  b.words[callLayout.DEVICE_KIND] = input.device.kindCode;
  b.words[callLayout.DEVICE_INDEX] = input.device.index;
  b.words[callLayout.FLAGS] = overlap ? headerConstants.LLTM_COLLECTIVE_OVERLAP : 0;
  b.words[callLayout.GIVEN] = 3;
  b.scalars[callLayout.SCALARS] = scalar;
  unwrap(native().lltm_nccl_run(comm, collectiveCode[collective], b.base), fn);
}
