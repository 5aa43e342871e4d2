/**
 * DistributedDataParallel, as torch's: the module's parameters broadcast
 * from rank 0 when it is made, so that every rank starts alike; each
 * backward pass's gradients averaged over the ranks in buckets, each bucket's
 * collective launched as soon as the backward has finished its gradients
 * (on the NCCL group, on a stream of its own, so that it runs on the GPU while the backward goes on) and
 * the buckets always in the same order on every rank; noSync() for gradient
 * accumulation; checkpoints written by rank 0 alone.
 *
 *   const ddp = await DistributedDataParallel.create(model);
 *   loss.backward();
 *   await ddp.syncGradients();   // every .grad now holds the mean over the ranks
 *   optimizer.step();
 */
import { noGrad } from "../autograd/grad_mode.ts";
import { registerPostAccumulateGradHook } from "../autograd/hooks.ts";
import { LLTMError } from "../errors.ts";
import type { Module } from "../nn/module.ts";
import type { Tensor } from "../tensor/index.ts";
import { type Bucket, makeBuckets } from "./buckets.ts";
import type { ProcessGroup } from "./group.ts";
import { getDefaultGroup } from "./init.ts";

export interface DistributedDataParallelOptions {
  /** Default: the default process group. */
  group?: ProcessGroup;
  /** A bucket's size in MiB (default 25, as torch's); a larger parameter has a bucket of its own. */
  bucketCapMB?: number;
}

export class DistributedDataParallel<M extends Module> implements Disposable {
  readonly group: ProcessGroup;
  private readonly buckets: Bucket[];
  private readonly bucketOf = new Map<Tensor, Bucket>();
  private readonly hooks: { remove(): void }[] = [];
  /** Buckets launched so far in this backward pass, in order. */
  private launched = 0;
  private syncing = true;
  private disposed = false;

  readonly module: M;

  private constructor(module: M, group: ProcessGroup, capBytes: number) {
    this.module = module;
    this.group = group;
    const params = module.parameters();
    this.buckets = makeBuckets(params, capBytes);
    for (const b of this.buckets) for (const e of b.entries) this.bucketOf.set(e.param, b);
    for (const p of params) this.hooks.push(registerPostAccumulateGradHook(p, (leaf) => this.gradientReady(leaf)));
  }

  /** Wraps `module`, after copying rank 0's parameters into every rank's. */
  static async create<M extends Module>(module: M, options: DistributedDataParallelOptions = {}): Promise<DistributedDataParallel<M>> {
    const fn = "DistributedDataParallel";
    const group = options.group ?? getDefaultGroup(fn);
    const capMB = options.bucketCapMB ?? 25;
    if (!(typeof capMB === "number" && capMB > 0 && Number.isFinite(capMB))) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'bucketCapMB' must be a positive number, got ${String(capMB)}`);
    }
    for (const [name, p] of module.namedParameters()) {
      if (!p.isContiguous()) throw new LLTMError("INVALID_SHAPE", `${fn}: parameter '${name}' must be contiguous`);
    }
    for (const p of module.parameters()) await group.broadcast(p, { src: 0 });
    return new DistributedDataParallel(module, group, capMB * 1024 * 1024);
  }

  /** The wrapped module's parameters. */
  parameters(): Tensor[] {
    return this.module.parameters();
  }

  /**
   * Runs `fn` (a forward and backward pass of one micro-batch) with the gradients kept local: they
   * accumulate in .grad, and the next backward pass outside noSync reduces the sum.
   */
  noSync<T>(fn: () => T): T {
    const was = this.syncing;
    this.syncing = false;
    let result: T;
    try {
      result = fn();
    } catch (e) {
      this.syncing = was;
      throw e;
    }
    if (result instanceof Promise) return result.finally(() => (this.syncing = was)) as T;
    this.syncing = was;
    return result;
  }

  /**
   * Finishes this backward pass's reduction: launches the buckets the backward did not (parameters it gave
   * no gradient count as zeros), waits for every bucket, and leaves each parameter's .grad holding the mean
   * over the ranks. A no-op inside noSync.
   */
  async syncGradients(): Promise<void> {
    this.assertLive("syncGradients");
    if (!this.syncing) return;
    for (; this.launched < this.buckets.length; this.launched++) this.launch(this.buckets[this.launched]!);
    try {
      for (const b of this.buckets) await b.reduction;
      this.group.join();
      noGrad(() => {
        for (const b of this.buckets) b.scatter();
      });
    } finally {
      for (const b of this.buckets) b.reset();
      this.launched = 0;
    }
  }

  /** Rank 0 saves the module (Module.save); every rank waits until the file is written. */
  async save(path: string, metadata: Record<string, string> = {}): Promise<void> {
    this.assertLive("save");
    if (this.group.rank === 0) this.module.save(path, metadata);
    await this.group.barrier();
  }

  /** Removes the hooks and frees the buckets; the module stays. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const h of this.hooks) h.remove();
    for (const b of this.buckets) b[Symbol.dispose]();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  private assertLive(fn: string): void {
    if (this.disposed) throw new LLTMError("DISPOSED", `DistributedDataParallel.${fn}: this DistributedDataParallel has been disposed`);
  }

  /** A parameter's gradient is final for this pass: launch every bucket, in order, that is now complete. */
  private gradientReady(param: Tensor): void {
    if (!this.syncing || this.disposed) return;
    this.bucketOf.get(param)?.ready.add(param);
    while (this.launched < this.buckets.length && this.buckets[this.launched]!.complete) {
      this.launch(this.buckets[this.launched]!);
      this.launched++;
    }
  }

  private launch(b: Bucket): void {
    const reduced = noGrad(() => b.gather());
    b.reduction = this.group.allReduce(reduced, { op: "mean", overlap: true });
    // Awaited in syncGradients; a failure is reported there, not as an unhandled rejection meanwhile.
    b.reduction.catch(() => {});
  }
}
