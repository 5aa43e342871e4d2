/**
 * Learning-rate schedules, as torch.optim.lr_scheduler's: each holds every
 * group's initial lr and, at step(), sets each group's lr for the next epoch
 * (or step, as the caller counts) from it.
 */
import { LLTMError } from "../errors.ts";
import type { Optimizer } from "./optimizer.ts";

export abstract class LRScheduler {
  readonly optimizer: Optimizer;
  /** Each group's lr when the schedule was made. */
  readonly baseLrs: readonly number[];
  /** Schedule steps taken. */
  lastEpoch = 0;

  protected constructor(optimizer: Optimizer) {
    this.optimizer = optimizer;
    this.baseLrs = optimizer.groups.map((g) => g.lr!);
  }

  /** The lr of a group of initial lr `base` after `epoch` schedule steps. */
  protected abstract lrAt(base: number, epoch: number): number;

  /** Advances the schedule one step and sets every group's lr. */
  step(): void {
    this.lastEpoch++;
    this.optimizer.groups.forEach((g, i) => {
      g.lr = this.lrAt(this.baseLrs[i]!, this.lastEpoch);
    });
  }

  /** Every group's lr now. */
  lastLr(): number[] {
    return this.optimizer.groups.map((g) => g.lr!);
  }
}

function positiveInteger(fn: string, name: string, v: number): void {
  if (!Number.isSafeInteger(v) || v < 1) throw new LLTMError("INVALID_ARGUMENT", `${fn}: '${name}' must be a positive integer, got ${v}`);
}

/** lr · gamma^⌊epoch / stepSize⌋. */
export class StepLR extends LRScheduler {
  readonly stepSize: number;
  readonly gamma: number;

  constructor(optimizer: Optimizer, options: { stepSize: number; gamma?: number }) {
    super(optimizer);
    positiveInteger("StepLR", "stepSize", options.stepSize);
    const gamma = options.gamma ?? 0.1;
    if (!(Number.isFinite(gamma) && gamma >= 0)) throw new LLTMError("INVALID_ARGUMENT", `StepLR: 'gamma' must be a finite number ≥ 0, got ${gamma}`);
    this.stepSize = options.stepSize;
    this.gamma = gamma;
  }

  protected lrAt(base: number, epoch: number): number {
    return base * this.gamma ** Math.floor(epoch / this.stepSize);
  }
}

/** Cosine from lr down to etaMin over tMax steps (SGDR without restarts). */
export class CosineAnnealingLR extends LRScheduler {
  readonly tMax: number;
  readonly etaMin: number;

  constructor(optimizer: Optimizer, options: { tMax: number; etaMin?: number }) {
    super(optimizer);
    positiveInteger("CosineAnnealingLR", "tMax", options.tMax);
    const etaMin = options.etaMin ?? 0;
    if (!(Number.isFinite(etaMin) && etaMin >= 0)) {
      throw new LLTMError("INVALID_ARGUMENT", `CosineAnnealingLR: 'etaMin' must be a finite number ≥ 0, got ${etaMin}`);
    }
    this.tMax = options.tMax;
    this.etaMin = etaMin;
  }

  protected lrAt(base: number, epoch: number): number {
    const t = Math.min(epoch, this.tMax);
    return this.etaMin + (base - this.etaMin) * (1 + Math.cos(Math.PI * t / this.tMax)) / 2;
  }
}

/** lr · factor(epoch), for any schedule (warm-up, say). */
export class LambdaLR extends LRScheduler {
  private readonly factor: (epoch: number) => number;

  constructor(optimizer: Optimizer, factor: (epoch: number) => number) {
    super(optimizer);
    if (typeof factor !== "function") throw new LLTMError("INVALID_ARGUMENT", "LambdaLR: 'factor' must be a function of the epoch");
    this.factor = factor;
    optimizer.groups.forEach((g, i) => {
      g.lr = this.lrAt(this.baseLrs[i]!, 0);
    });
  }

  protected lrAt(base: number, epoch: number): number {
    const f = this.factor(epoch);
    if (typeof f !== "number" || !Number.isFinite(f)) throw new LLTMError("INVALID_ARGUMENT", `LambdaLR: factor(${epoch}) gave ${f}, not a finite number`);
    return base * f;
  }
}
