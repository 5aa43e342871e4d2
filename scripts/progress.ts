/**
 * What the training scripts show as they run: a progress line (a bar on a
 * terminal, plain lines otherwise) and the losses summed on the device
 * between reads, so that a step reads nothing back.
 */
import process from "node:process";

import type { Tensor } from "../ts/index.ts";

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

/** The losses a training loop adds into `sum` (a [1] tensor on the device), read as their mean when asked. */
export class LossMeter {
  /** The mean of each read, in order. */
  readonly curve: number[] = [];
  /** The last mean read (NaN before the first). */
  last = NaN;
  private steps = 0;
  private readonly sum: Tensor;

  constructor(sum: Tensor) {
    this.sum = sum;
  }

  /** Counts one step whose loss was added into `sum`. */
  counted(): void {
    this.steps++;
  }

  /** The mean since the last read into `last` and `curve` (one read, one synchronisation); nothing when no step was counted. */
  read(): void {
    if (this.steps === 0) return;
    this.last = this.sum.item() / this.steps;
    this.curve.push(this.last);
    this.sum.fill(0);
    this.steps = 0;
  }
}
