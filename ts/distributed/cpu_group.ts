/**
 * The CPU process group: collectives over the TCP store's all-gather rounds
 * (every rank sends its bytes to the master's store and receives all ranks'),
 * each rank combining the parts itself in rank order. Meant for CPU tensors
 * and for tests without GPUs; tensors on a GPU work too, through the host.
 * With world size 1 it needs no store, and every collective is a local copy.
 */
import { LLTMError } from "../errors.ts";
import type { Tensor } from "../tensor/index.ts";
import { checkOp, checkPair, checkRank, checkTensor } from "./checks.ts";
import type { BroadcastOptions, ProcessGroup, ReduceOptions } from "./group.ts";
import { reduceBytes, tensorBytes, tensorOfBytes, writeInto } from "./host_bytes.ts";
import type { TCPStore } from "./store.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class CPUGroup implements ProcessGroup {
  readonly backend = "cpu" as const;
  readonly rank: number;
  readonly worldSize: number;
  private readonly store: TCPStore | undefined;
  private sequence = 0;
  private destroyed = false;

  /** `store` is needed, and owned by the group, when worldSize > 1. */
  constructor(rank: number, worldSize: number, store: TCPStore | undefined) {
    this.rank = rank;
    this.worldSize = worldSize;
    this.store = store;
    if (worldSize > 1 && store === undefined) throw new LLTMError("INVALID_ARGUMENT", "CPUGroup: a group of more than one rank needs a store");
  }

  async allReduce(tensor: Tensor, options: ReduceOptions = {}): Promise<void> {
    const fn = "allReduce";
    this.assertLive(fn);
    checkTensor(fn, "tensor", tensor);
    const op = checkOp(fn, options.op ?? "sum", tensor);
    const parts = await this.exchange(fn, signature(tensor), tensorBytes(tensor));
    writeInto(tensor, reduceBytes(parts, tensor.dtype, tensor.shape, op));
  }

  async broadcast(tensor: Tensor, options: BroadcastOptions = {}): Promise<void> {
    const fn = "broadcast";
    this.assertLive(fn);
    checkTensor(fn, "tensor", tensor);
    const src = checkRank(fn, "src", options.src ?? 0, this.worldSize);
    const mine = this.rank === src ? tensorBytes(tensor) : new Uint8Array(0);
    const parts = await this.exchange(fn, `${signature(tensor)} src ${src}`, mine);
    if (this.rank !== src) writeInto(tensor, tensorOfBytes(parts[src]!, tensor.dtype, tensor.shape));
  }

  async allGather(output: Tensor, input: Tensor): Promise<void> {
    const fn = "allGather";
    this.assertLive(fn);
    checkPair(fn, ["output", output], ["input", input], this.worldSize);
    const parts = await this.exchange(fn, signature(input), tensorBytes(input));
    writeInto(output, tensorOfBytes(concat(parts), output.dtype, output.shape));
  }

  async reduceScatter(output: Tensor, input: Tensor, options: ReduceOptions = {}): Promise<void> {
    const fn = "reduceScatter";
    this.assertLive(fn);
    checkPair(fn, ["input", input], ["output", output], this.worldSize);
    const op = checkOp(fn, options.op ?? "sum", input);
    const bytes = tensorBytes(input);
    const share = bytes.byteLength / this.worldSize;
    const parts = await this.exchange(fn, signature(input), bytes);
    const mine = parts.map((p) => p.subarray(this.rank * share, (this.rank + 1) * share));
    writeInto(output, reduceBytes(mine, output.dtype, output.shape, op));
  }

  join(): void {
    this.assertLive("join");
  }

  async barrier(): Promise<void> {
    this.assertLive("barrier");
    await this.exchange("barrier", "", new Uint8Array(0));
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    if (this.worldSize > 1) await this.barrier();
    this.destroyed = true;
    await this.store?.close();
  }

  private assertLive(fn: string): void {
    if (this.destroyed) throw new LLTMError("INVALID_ARGUMENT", `${fn}: the process group has been destroyed`);
  }

  /**
   * One round: every rank's `payload`, in rank order. Each part starts with the call's description (the
   * collective, dtype, elements), checked equal on every rank, so that ranks calling different collectives
   * at the same point fail by name instead of mixing their data.
   */
  private async exchange(fn: string, what: string, payload: Uint8Array): Promise<Uint8Array[]> {
    const call = ++this.sequence;
    if (this.store === undefined) return [payload];
    const head = encoder.encode(`${fn} ${what}`);
    const framed = new Uint8Array(4 + head.byteLength + payload.byteLength);
    new DataView(framed.buffer).setUint32(0, head.byteLength, true);
    framed.set(head, 4);
    framed.set(payload, 4 + head.byteLength);
    let parts: Uint8Array[];
    try {
      parts = await this.store.exchange(`cpu/${call}`, this.rank, this.worldSize, framed);
    } catch (e) {
      throw new LLTMError((e as LLTMError).code ?? "INTERNAL", `${fn} (collective #${call} of rank ${this.rank}): ${(e as Error).message}`);
    }
    return parts.map((p, r) => {
      const n = new DataView(p.buffer, p.byteOffset, p.byteLength).getUint32(0, true);
      const theirs = decoder.decode(p.subarray(4, 4 + n));
      if (theirs !== `${fn} ${what}`) {
        throw new LLTMError(
          "INVALID_ARGUMENT",
          `${fn}: collective #${call} differs between ranks: rank ${this.rank} called ${fn} ${what}, rank ${r} ${theirs}`,
        );
      }
      return p.subarray(4 + n);
    });
  }
}

function signature(t: Tensor): string {
  return `${t.dtype}[${t.numel}]`;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
