/**
 * What the training scripts show as they run: a progress line (a bar on a
 * terminal, plain lines otherwise) and the loss curve kept on the device,
 * so that a step reads nothing back.
 */
import process from "node:process";

import { Tensor } from "../ts/index.ts";

export const tty = process.stdout.isTTY === true;

/**
 * Prints `text` for step `step` of `steps`: on a terminal after a bar that
 * fills with the steps, or with the time budget when that runs out first.
 */
export function drawProgress(text: string, step: number, steps: number, elapsed: number, budget: number | undefined, final: boolean): void {
  if (!tty) {
    console.log(text);
    return;
  }
  const fraction = Math.min(1, Math.max(step / steps, budget === undefined ? 0 : elapsed / budget));
  const width = 30, filled = Math.round(fraction * width);
  process.stdout.write(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${text}\x1b[K` + (final ? "\n" : ""));
}

/** "12.3/100 s budget", or "12.3 s" without a budget. */
export function timeText(elapsed: number, budget: number | undefined): string {
  return budget === undefined ? `${elapsed.toFixed(1)} s` : `${elapsed.toFixed(1)}/${budget} s budget`;
}

/**
 * The training loss's curve, kept on the loss's device: each step adds its
 * loss into `sum` (a [1] tensor there), and closing a curve point moves that
 * sum into a list on the device with no read, so that the host keeps running
 * ahead of the device (a read waits for every step queued before it). Only
 * `last` (for the progress line) and `curve` (at the end) read, once each.
 */
export class LossMeter implements Disposable {
  private readonly sum: Tensor;
  private readonly sums: Tensor;
  /** The steps each closed point averages. */
  private readonly counts: number[] = [];
  private steps = 0;

  /** `points`: the most curve points the loop closes. */
  constructor(sum: Tensor, points: number) {
    this.sum = sum;
    this.sums = Tensor.zeros([Math.max(1, points)], { dtype: sum.dtype, device: sum.device });
  }

  /** Counts one step whose loss was added into `sum`. */
  counted(): void {
    this.steps++;
  }

  /** Closes a curve point over the steps counted since the last one (nothing when none was): no read. */
  close(): void {
    if (this.steps === 0) return;
    const k = this.counts.length;
    if (k >= this.sums.numel) throw new RangeError(`LossMeter: more than the ${this.sums.numel} curve points it was made for`);
    using slot = this.sums.narrow(0, k, 1);
    slot.copyFrom(this.sum);
    this.sum.fill(0);
    this.counts.push(this.steps);
    this.steps = 0;
  }

  /** The mean of the last point closed, or before the first, of the steps counted so far (NaN before any): one read. */
  get last(): number {
    const k = this.counts.length;
    if (k === 0) return this.steps === 0 ? NaN : this.sum.item() / this.steps;
    using slot = this.sums.narrow(0, k - 1, 1);
    return slot.item() / this.counts[k - 1]!;
  }

  /** Every closed point's mean, in order: one read. */
  get curve(): number[] {
    const k = this.counts.length;
    if (k === 0) return [];
    using closed = this.sums.narrow(0, 0, k);
    const sums = closed.toTypedArray();
    return this.counts.map((n, i) => sums[i]! / n);
  }

  [Symbol.dispose](): void {
    this.sums.dispose();
  }
}
