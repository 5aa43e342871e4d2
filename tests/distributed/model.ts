/** The small model of the data-parallel tests: an LLTM and a linear head, trained on a regression of fixed sequences. */
import { type DeviceLike, Linear, LLTM, mseLoss, Module, Tensor } from "../../ts/index.ts";

export const STEPS_T = 4, FEATURES = 3, STATE = 8, OUTPUTS = 2;

export class TinyModel extends Module {
  readonly lltm: LLTM;
  readonly head: Linear;
  constructor(seed: number) {
    super("TinyModel");
    this.lltm = this.registerModule("lltm", new LLTM(FEATURES, STATE, { seed }));
    this.head = this.registerModule("head", new Linear(STATE, OUTPUTS, { seed: seed + 1 }));
  }
}

export function makeModel(seed: number, device: DeviceLike): TinyModel {
  return new TinyModel(seed).to(device);
}

export interface Batch {
  x: Tensor;
  y: Tensor;
}

/** Samples start .. start + size - 1 of a fixed data set: inputs [T, size, F] and targets [T, size, OUTPUTS]. */
export function batchOf(start: number, size: number, device: DeviceLike): Batch {
  const x = new Float32Array(STEPS_T * size * FEATURES), y = new Float32Array(STEPS_T * size * OUTPUTS);
  for (let t = 0; t < STEPS_T; t++) {
    for (let b = 0; b < size; b++) {
      const s = start + b;
      for (let f = 0; f < FEATURES; f++) x[(t * size + b) * FEATURES + f] = Math.sin(s * 1.3 + t * 0.7 + f * 2.1);
      for (let k = 0; k < OUTPUTS; k++) y[(t * size + b) * OUTPUTS + k] = 0.5 * Math.cos(s * 0.9 + t * 0.5 + k);
    }
  }
  using hx = Tensor.fromTypedArray(x, [STEPS_T, size, FEATURES]);
  using hy = Tensor.fromTypedArray(y, [STEPS_T, size, OUTPUTS]);
  return { x: hx.to(device), y: hy.to(device) };
}

/** The mean squared error of the model on `batch` (the batch's tensors are disposed). */
export function stepLoss(model: TinyModel, batch: Batch): Tensor {
  using x = batch.x, y = batch.y;
  using out = model.lltm.forward(x);
  using prediction = model.head.forward(out.output);
  return mseLoss(prediction, y);
}
