/**
 * Data parallelism across processes, GPUs and machines, as torch.distributed:
 * process groups on NCCL (one GPU each) or on the CPU (the TCP store's
 * collectives), the rendezvous by RANK / WORLD_SIZE / MASTER_ADDR /
 * MASTER_PORT, DistributedDataParallel, DistributedSampler, and the launcher
 * behind `lltm-run`.
 */
export { type Backend, type BroadcastOptions, type ProcessGroup, type ReduceOp, type ReduceOptions } from "./group.ts";
export {
  allGather, allReduce, barrier, broadcast, destroyProcessGroup, getDefaultGroup, getRank, getWorldSize, type GroupOption,
  initProcessGroup, type InitProcessGroupOptions, isInitialized, reduceScatter,
} from "./init.ts";
export { DistributedDataParallel, type DistributedDataParallelOptions } from "./ddp.ts";
export { DistributedSampler, type DistributedSamplerOptions } from "./sampler.ts";
export { TCPStore, type TCPStoreOptions } from "./store.ts";
export { launch, type LaunchOptions, launchUsage, parseLaunchArgs } from "./launcher.ts";
export { type PostAccumulateGradHook, registerPostAccumulateGradHook } from "../autograd/hooks.ts";
