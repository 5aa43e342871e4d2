/**
 * A process group, as torch.distributed's: `worldSize` processes, each with
 * its `rank`, running the same collectives in the same order. Every
 * collective works in place on the library's tensors (contiguous, of any
 * dtype) and resolves once its result is in them, or, on the NCCL group,
 * once it is queued on the tensors' CUDA stream, where later work on that
 * device is ordered after it (read the values with toTypedArray(), which
 * waits, or cuda.synchronize()).
 */
import type { Tensor } from "../tensor/index.ts";

/** How allReduce and reduceScatter combine the ranks' tensors: their sum, or their mean (float dtypes). */
export type ReduceOp = "sum" | "mean";

export type Backend = "nccl" | "cpu";

export interface ReduceOptions {
  /** Default "sum". */
  op?: ReduceOp;
  /**
   * allReduce on the NCCL group: run on the group's own CUDA stream, concurrently with the work the device
   * queues afterwards (a backward pass), until join(); the tensor must be left alone until then. Elsewhere
   * the collective is as without it.
   */
  overlap?: boolean;
}

export interface BroadcastOptions {
  /** The rank whose tensor every rank receives (default 0). */
  src?: number;
}

export interface ProcessGroup {
  readonly backend: Backend;
  readonly rank: number;
  readonly worldSize: number;
  /** Every rank's `tensor` combined by `op`, written into each rank's `tensor`. */
  allReduce(tensor: Tensor, options?: ReduceOptions): Promise<void>;
  /** Rank `src`'s `tensor` copied into every rank's `tensor`. */
  broadcast(tensor: Tensor, options?: BroadcastOptions): Promise<void>;
  /** Every rank's `input`, in rank order, into `output` (worldSize times input's elements), as all_gather_into_tensor. */
  allGather(output: Tensor, input: Tensor): Promise<void>;
  /**
   * `input` (worldSize times output's elements) combined over the ranks by `op`; rank r keeps the
   * r-th part in `output`, as reduce_scatter_tensor.
   */
  reduceScatter(output: Tensor, input: Tensor, options?: ReduceOptions): Promise<void>;
  /** Orders the device's later work after the collectives run with `overlap` (nothing to do on the CPU group). */
  join(): void;
  /** Resolves once every rank has reached it. */
  barrier(): Promise<void>;
  /** Ends the group (a barrier first, so that the master's store outlives every rank's use of it). */
  destroy(): Promise<void>;
}
