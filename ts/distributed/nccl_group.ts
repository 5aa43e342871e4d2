/**
 * The NCCL process group: one GPU per rank, collectives queued by NCCL on
 * the tensors' CUDA stream (so they overlap the host's work and are ordered
 * with the kernels around them). The ranks meet through the TCP store: rank
 * 0 makes the NCCL unique id and sets it there, the others read it, and all
 * join the communicator once every rank has the id. The store stays open for
 * barrier() and destroy(), which thereby name a rank that is gone. The
 * collectives are async only so that a refusal rejects their promise, as the
 * CPU group's do: their native call is queued before they return.
 */
import type { Device } from "../device.ts";
import { LLTMError } from "../errors.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkOp, checkPair, checkRank, checkTensor } from "./checks.ts";
import type { BroadcastOptions, ProcessGroup, ReduceOptions } from "./group.ts";
import type { TCPStore } from "./store.ts";

export class NCCLGroup implements ProcessGroup {
  readonly backend = "nccl" as const;
  readonly rank: number;
  readonly worldSize: number;
  readonly device: Device;
  private readonly comm: number;
  private readonly store: TCPStore | undefined;
  private destroyed = false;
  private barriers = 0;

  private constructor(rank: number, worldSize: number, device: Device, comm: number, store: TCPStore | undefined) {
    this.rank = rank;
    this.worldSize = worldSize;
    this.device = device;
    this.comm = comm;
    this.store = store;
  }

  /** Joins the ranks' communicator on `device` (a CUDA device); `store` is needed, and owned by the group, when worldSize > 1. */
  static async create(rank: number, worldSize: number, device: Device, store: TCPStore | undefined): Promise<NCCLGroup> {
    const fn = "initProcessGroup";
    if (device.kind !== "cuda") throw new LLTMError("INVALID_DEVICE", `${fn}: the NCCL backend needs a CUDA device, got ${device}`);
    native.ncclVersion(fn);
    let id: Uint8Array;
    if (store === undefined) id = native.ncclUniqueId(fn);
    else {
      if (rank === 0) await store.set("nccl/unique_id", native.ncclUniqueId(fn));
      id = await store.get("nccl/unique_id");
      if (id.byteLength !== native.NCCL_UNIQUE_ID_BYTES) {
        throw new LLTMError("INTERNAL", `${fn}: the store's NCCL unique id has ${id.byteLength} bytes, not ${native.NCCL_UNIQUE_ID_BYTES}`);
      }
      // Every rank has the id before any blocks in the communicator's start, the master (whose process runs the store) included.
      await store.exchange("nccl/has_id", rank, worldSize, new Uint8Array(0));
    }
    const comm = native.ncclCommInit(fn, id, worldSize, rank, device);
    return new NCCLGroup(rank, worldSize, device, comm, store);
  }

  async allReduce(tensor: Tensor, options: ReduceOptions = {}): Promise<void> {
    const fn = "allReduce";
    this.check(fn, "tensor", tensor);
    const op = checkOp(fn, options.op ?? "sum", tensor);
    native.ncclRun(fn, this.comm, "allReduce", tensor, tensor, native.reduceOpCode[op], options.overlap === true);
  }

  join(): void {
    this.assertLive("join");
    native.ncclJoin("join", this.comm);
  }

  async broadcast(tensor: Tensor, options: BroadcastOptions = {}): Promise<void> {
    const fn = "broadcast";
    this.check(fn, "tensor", tensor);
    const src = checkRank(fn, "src", options.src ?? 0, this.worldSize);
    native.ncclRun(fn, this.comm, "broadcast", tensor, tensor, src);
  }

  async allGather(output: Tensor, input: Tensor): Promise<void> {
    const fn = "allGather";
    this.assertLive(fn);
    checkPair(fn, ["output", output], ["input", input], this.worldSize);
    this.onDevice(fn, "input", input);
    native.ncclRun(fn, this.comm, "allGather", input, output, 0);
  }

  async reduceScatter(output: Tensor, input: Tensor, options: ReduceOptions = {}): Promise<void> {
    const fn = "reduceScatter";
    this.assertLive(fn);
    checkPair(fn, ["input", input], ["output", output], this.worldSize);
    this.onDevice(fn, "input", input);
    const op = checkOp(fn, options.op ?? "sum", input);
    native.ncclRun(fn, this.comm, "reduceScatter", input, output, native.reduceOpCode[op]);
  }

  /** Every rank's queued collectives done: a one-element all-reduce, waited for, then the store's round. */
  async barrier(): Promise<void> {
    const fn = "barrier";
    this.assertLive(fn);
    using token = Tensor.ones([1], { dtype: "int32", device: this.device });
    native.ncclRun(fn, this.comm, "allReduce", token, token, native.reduceOpCode.sum);
    token.toTypedArray();
    native.ncclCommError(fn, this.comm);
    await this.store?.exchange(`nccl/barrier/${++this.barriers}`, this.rank, this.worldSize, new Uint8Array(0));
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    await this.barrier();
    this.destroyed = true;
    native.ncclCommDestroy("destroyProcessGroup", this.comm, false);
    await this.store?.close();
  }

  private assertLive(fn: string): void {
    if (this.destroyed) throw new LLTMError("INVALID_ARGUMENT", `${fn}: the process group has been destroyed`);
  }

  private check(fn: string, name: string, t: Tensor): void {
    this.assertLive(fn);
    checkTensor(fn, name, t);
    this.onDevice(fn, name, t);
  }

  private onDevice(fn: string, name: string, t: Tensor): void {
    if (t.device !== this.device) {
      throw new LLTMError("INVALID_DEVICE", `${fn}: '${name}' is on ${t.device}, the group's GPU is ${this.device}`);
    }
  }
}
