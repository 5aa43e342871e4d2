/**
 * DistributedSampler, as torch's: each rank's share of a data set's indices,
 * the same permutation on every rank (seeded by `seed` + the epoch), padded by
 * wrapping around so that every rank gets as many (or, with dropLast, the
 * tail cut off instead).
 */
import { LLTMError } from "../errors.ts";
import { Random } from "../random.ts";
import { getDefaultGroup, isInitialized } from "./init.ts";

export interface DistributedSamplerOptions {
  /** Default: the default group's, else 0 of 1. */
  rank?: number;
  worldSize?: number;
  /** Default true. */
  shuffle?: boolean;
  /** Default 0. */
  seed?: number;
  /** Default false: pad by repeating the first indices. */
  dropLast?: boolean;
}

export class DistributedSampler implements Iterable<number> {
  readonly size: number;
  readonly rank: number;
  readonly worldSize: number;
  private epoch = 0;
  private readonly shuffle: boolean;
  private readonly seed: number;
  private readonly dropLast: boolean;

  constructor(size: number, options: DistributedSamplerOptions = {}) {
    const fn = "DistributedSampler";
    this.size = size;
    if (!Number.isSafeInteger(size) || size < 1) throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'size' must be a positive integer, got ${size}`);
    const group = isInitialized() ? getDefaultGroup(fn) : undefined;
    this.worldSize = options.worldSize ?? group?.worldSize ?? 1;
    this.rank = options.rank ?? group?.rank ?? 0;
    if (!Number.isInteger(this.worldSize) || this.worldSize < 1) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'worldSize' must be a positive integer, got ${this.worldSize}`);
    }
    if (!Number.isInteger(this.rank) || this.rank < 0 || this.rank >= this.worldSize) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'rank' must be in [0, ${this.worldSize}), got ${this.rank}`);
    }
    this.shuffle = options.shuffle ?? true;
    this.seed = options.seed ?? 0;
    this.dropLast = options.dropLast ?? false;
    if (this.dropLast && size < this.worldSize) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: with dropLast, 'size' (${size}) must be at least the world size (${this.worldSize})`);
    }
  }

  /** The epoch, which reseeds the shuffle (call it before each epoch, as torch's set_epoch). */
  setEpoch(epoch: number): void {
    this.epoch = epoch;
  }

  /** How many indices each rank gets. */
  get length(): number {
    return this.dropLast ? Math.floor(this.size / this.worldSize) : Math.ceil(this.size / this.worldSize);
  }

  /** This rank's indices for the current epoch: every worldSize-th of the (shuffled, padded) order, from `rank`. */
  indices(): number[] {
    const order = Array.from({ length: this.size }, (_, i) => i);
    if (this.shuffle) {
      const random = new Random(this.seed + this.epoch);
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(random.uniform() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
    }
    const total = this.length * this.worldSize;
    while (order.length < total) order.push(...order.slice(0, total - order.length));
    order.length = total;
    const mine: number[] = [];
    for (let i = this.rank; i < total; i += this.worldSize) mine.push(order[i]!);
    return mine;
  }

  [Symbol.iterator](): Iterator<number> {
    return this.indices()[Symbol.iterator]();
  }
}
