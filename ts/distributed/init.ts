/**
 * initProcessGroup and the default group, as torch.distributed's
 * init_process_group: the rendezvous from the options or the environment
 * (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), the master's TCP
 * store for a group of more than one, then the backend's group. The
 * collectives below use the default group unless given another.
 */
import { Device, type DeviceLike } from "../device.ts";
import { LLTMError } from "../errors.ts";
import type { Tensor } from "../tensor/index.ts";
import { CPUGroup } from "./cpu_group.ts";
import { type Rendezvous, rendezvous, type RendezvousOptions } from "./environment.ts";
import type { Backend, BroadcastOptions, ProcessGroup, ReduceOptions } from "./group.ts";
import { NCCLGroup } from "./nccl_group.ts";
import { TCPStore } from "./store.ts";

export interface InitProcessGroupOptions extends RendezvousOptions {
  /** "nccl": one CUDA GPU per rank; "cpu": the TCP store's collectives (any device, through the host). */
  backend: Backend;
  /** The NCCL group's GPU (default cuda:LOCAL_RANK). */
  device?: DeviceLike;
  /** How long to wait for the master's store and for each of its answers (default 300 s). */
  timeoutMs?: number;
}

let defaultGroup: ProcessGroup | undefined;

/** Joins the processes of this job and makes the group the default one. */
export async function initProcessGroup(options: InitProcessGroupOptions): Promise<ProcessGroup> {
  const fn = "initProcessGroup";
  if (defaultGroup !== undefined) throw new LLTMError("INVALID_ARGUMENT", `${fn}: the default process group is already initialised`);
  const backend = options?.backend;
  if (backend !== "nccl" && backend !== "cpu") {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'backend' must be "nccl" or "cpu", got ${JSON.stringify(backend)}`);
  }
  const r = rendezvous(fn, options);
  const device = backend === "nccl" ? Device.of(options.device ?? `cuda:${r.localRank}`) : Device.cpu;
  const store = r.worldSize > 1 ? await openStore(r, options.timeoutMs) : undefined;
  try {
    defaultGroup = backend === "cpu" ? new CPUGroup(r.rank, r.worldSize, store) : await NCCLGroup.create(r.rank, r.worldSize, device, store);
  } catch (e) {
    await store?.close();
    throw e;
  }
  return defaultGroup;
}

function openStore(r: Rendezvous, timeoutMs: number | undefined): Promise<TCPStore> {
  return TCPStore.connect({ host: r.masterAddr, port: r.masterPort, isMaster: r.rank === 0, rank: r.rank, timeoutMs });
}

/** Whether initProcessGroup has made the default group (and destroyProcessGroup not yet ended it). */
export function isInitialized(): boolean {
  return defaultGroup !== undefined;
}

/** The default group; an LLTMError naming `fn` when there is none. */
export function getDefaultGroup(fn = "getDefaultGroup"): ProcessGroup {
  if (defaultGroup === undefined) throw new LLTMError("INVALID_ARGUMENT", `${fn}: no process group: call initProcessGroup first`);
  return defaultGroup;
}

/** Ends the default group (after a barrier); safe to call when there is none. */
export async function destroyProcessGroup(): Promise<void> {
  const group = defaultGroup;
  defaultGroup = undefined;
  await group?.destroy();
}

/** This process's rank in the default group. */
export function getRank(): number {
  return getDefaultGroup("getRank").rank;
}

/** The default group's size. */
export function getWorldSize(): number {
  return getDefaultGroup("getWorldSize").worldSize;
}

export interface GroupOption {
  /** The group to use instead of the default one. */
  group?: ProcessGroup;
}

export function allReduce(tensor: Tensor, options: ReduceOptions & GroupOption = {}): Promise<void> {
  return (options.group ?? getDefaultGroup("allReduce")).allReduce(tensor, options);
}

export function broadcast(tensor: Tensor, options: BroadcastOptions & GroupOption = {}): Promise<void> {
  return (options.group ?? getDefaultGroup("broadcast")).broadcast(tensor, options);
}

export function allGather(output: Tensor, input: Tensor, options: GroupOption = {}): Promise<void> {
  return (options.group ?? getDefaultGroup("allGather")).allGather(output, input);
}

export function reduceScatter(output: Tensor, input: Tensor, options: ReduceOptions & GroupOption = {}): Promise<void> {
  return (options.group ?? getDefaultGroup("reduceScatter")).reduceScatter(output, input, options);
}

export function barrier(options: GroupOption = {}): Promise<void> {
  return (options.group ?? getDefaultGroup("barrier")).barrier();
}
