/**
 * Dropout, as torch.nn.Dropout: in training each element is zeroed with
 * probability p and the rest scaled by 1/(1-p); in evaluation (eval()) it
 * passes the input through. The mask is drawn on the host from a seeded
 * generator and multiplied in on the tensor's device.
 */
import { recordView } from "../autograd/record.ts";
import { LLTMError } from "../errors.ts";
import { refuseUnderCapture } from "../graph/capture.ts";
import { Random } from "../random.ts";
import type { Tensor } from "../tensor/index.ts";
import { Module } from "./module.ts";
import { multiplyByMask } from "./mask.ts";

export class Dropout extends Module {
  readonly p: number;
  private readonly rng: Random;

  constructor(p = 0.5, options: { seed?: number } = {}) {
    super("Dropout");
    if (typeof p !== "number" || !(p >= 0 && p < 1)) throw new LLTMError("INVALID_ARGUMENT", `Dropout: 'p' must be a probability in [0, 1), got ${p}`);
    this.p = p;
    this.rng = new Random(options.seed ?? 0);
  }

  /** x with elements dropped (training), or x itself as a new reference (evaluation, or p = 0). */
  forward(x: Tensor): Tensor {
    this.assertLive("Dropout.forward");
    x.assertLive("Dropout.forward: the input");
    if (!this.training || this.p === 0) return recordView("Dropout.forward", x, x.retain(), (g) => g.retain());
    refuseUnderCapture("Dropout.forward", "its mask is drawn on the host at every call (use eval(), or p = 0, in a captured step)");
    return multiplyByMask(x, this.p, this.rng);
  }
}
