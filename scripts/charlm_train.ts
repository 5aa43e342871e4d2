/**
 * The main job's data and training step, shared by scripts/charlm.ts and
 * scripts/compare_charlm.ts (which hands the same recipe to PyTorch): the
 * text split, batches of windows at given offsets, the optimizer and its
 * schedule, one training step, and the validation loss.
 */
import { readFileSync } from "node:fs";

import {
  AdamW, clipGradNorm_, compileStep, CosineAnnealingLR, type DeviceLike, type DistributedDataParallel, GradScaler, noGrad, Tensor,
} from "../ts/index.ts";
import { type CharLM, encode, vocabularyOf } from "./charlm_model.ts";
import { toDevice } from "./device_batch.ts";

/** The training recipe: AdamW with this decoupled weight decay, a cosine schedule down to lr·etaMinFraction, clipping at clipNorm. */
export const recipe = { weightDecay: 0.01, etaMinFraction: 0.1, clipNorm: 1 } as const;

export interface Corpus {
  text: string;
  vocabulary: string;
  /** The first 90% of the text's ids, and the rest, held out. */
  train: Int32Array;
  valid: Int32Array;
}

export function loadCorpus(): Corpus {
  const text = readFileSync(new URL("../data/kjv/genesis-joshua.txt", import.meta.url), "utf8");
  const vocabulary = vocabularyOf(text);
  const ids = encode(text, vocabulary);
  const split = Math.floor(ids.length * 0.9);
  return { text, vocabulary, train: ids.subarray(0, split), valid: ids.subarray(split) };
}

/** T+1 characters from each offset: inputs and next-character targets, int32 [T, B] each (B = offsets.length), on the device. */
export function batchAt(source: Int32Array, offsets: ArrayLike<number>, T: number, device: DeviceLike): { x: Tensor; y: Tensor } {
  const B = offsets.length;
  const x = new Int32Array(T * B), y = new Int32Array(T * B);
  for (let b = 0; b < B; b++) {
    const o = offsets[b]!;
    for (let t = 0; t < T; t++) {
      x[t * B + b] = source[o + t]!;
      y[t * B + b] = source[o + t + 1]!;
    }
  }
  return { x: toDevice(x, [T, B], device), y: toDevice(y, [T, B], device) };
}

/** The validation set: consecutive windows over the held-out text, the same at every evaluation. */
export function validationOffsets(valid: Int32Array, T: number, B: number, batches: number): number[][] {
  const n = Math.min(batches, Math.floor((valid.length - 1) / (T * B)));
  return Array.from({ length: n }, (_, k) => Array.from({ length: B }, (_, b) => (k * B + b) * T));
}

export interface Trainer {
  optimizer: AdamW;
  schedule: CosineAnnealingLR;
  scaler: GradScaler;
  /** Whether the step is captured once and replayed (CUDA, and neither loss scaling nor DDP). */
  readonly captured: boolean;
  /** Where the batches go: the step's device (a captured step copies them, on the device, into the tensors it reads). */
  readonly inputDevice: DeviceLike;
  /** Steps the scaler skipped for an infinity in the gradients. */
  readonly skipped: number;
  /** One step on the batch; adds the loss (a [1] tensor) into `lossSum` on the device, reads nothing back but the scaler's flag. */
  step(x: Tensor, y: Tensor, lossSum: Tensor): Promise<void>;
  [Symbol.dispose](): void;
}

export interface TrainerOptions {
  /** The device the model is on (where a captured step runs). */
  device?: DeviceLike;
  /** Capture the step once and replay it (compileStep: CUDA only; the CPU runs it as it is). */
  graph?: boolean;
  /** Dynamic loss scaling (float16 models). */
  scale?: boolean;
  /** A data-parallel wrapper of the model: its gradients are averaged before clipping. */
  ddp?: DistributedDataParallel<CharLM>;
  /** The optimizer fused: the parameters in one flat buffer, clipped and updated with one launch each (default true). */
  fused?: boolean;
}

export function trainer(model: CharLM, lr: number, steps: number, options: TrainerOptions = {}): Trainer {
  const { device = "cpu", scale = false, ddp, fused = true } = options;
  // A captured step cannot read the scaler's flag back nor wait for the other ranks' gradients; the CPU runs it as it is.
  const graph = options.graph === true && !scale && ddp === undefined;
  const capturedOnDevice = graph && String(device).startsWith("cuda");
  const optimizer = new AdamW(model.namedParameters(), { lr, weightDecay: recipe.weightDecay, capturable: graph, fused });
  const schedule = new CosineAnnealingLR(optimizer, { tMax: steps, etaMin: lr * recipe.etaMinFraction });
  const scaler = new GradScaler({ enabled: scale });
  let skipped = 0;
  const forwardBackward = (x: Tensor, y: Tensor, lossSum: Tensor) => {
    using loss = model.loss(x, y);
    noGrad(() => lossSum.add_(loss));
    using scaled = scaler.scale(loss);
    scaled.backward();
  };
  const update = () => {
    // Clipped after unscaling, so that the limit applies to the true gradients.
    scaler.unscale_(optimizer);
    clipGradNorm_(model.parameters(), recipe.clipNorm).dispose();
    if (!scaler.step(optimizer)) skipped++;
    scaler.update();
    optimizer.zeroGrad();
  };
  // A captured step adds into the lossSum it was captured with: the one of the first call.
  let sumInto: Tensor | undefined;
  const compiled = compileStep((x: Tensor, y: Tensor) => {
    forwardBackward(x, y, sumInto!);
    update();
  }, { device, enabled: graph });
  return {
    optimizer,
    schedule,
    scaler,
    captured: capturedOnDevice,
    inputDevice: device,
    get skipped() {
      return skipped;
    },
    async step(x, y, lossSum) {
      if (sumInto !== undefined && sumInto !== lossSum) throw new Error("trainer.step: every step must add into the same lossSum");
      sumInto = lossSum;
      if (ddp === undefined) {
        compiled(x, y);
      } else {
        forwardBackward(x, y, lossSum);
        await ddp.syncGradients();
        update();
      }
      schedule.step();
    },
    [Symbol.dispose]() {
      compiled[Symbol.dispose]();
      scaler[Symbol.dispose]();
      optimizer.dispose();
    },
  };
}

/** The mean validation loss in nats per character (evaluation mode, nothing recorded). */
export function validationLoss(model: CharLM, valid: Int32Array, offsets: readonly (readonly number[])[], T: number, device: DeviceLike): number {
  model.eval();
  try {
    return noGrad(() => {
      using total = Tensor.zeros([1], { device });
      let count = 0;
      for (const o of offsets) {
        const { x, y } = batchAt(valid, o, T, device);
        using l = model.loss(x, y, "sum");
        total.add_(l);
        count += x.numel;
        x.dispose();
        y.dispose();
      }
      return total.item() / count;
    });
  } finally {
    model.train();
  }
}
