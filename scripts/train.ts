/**
 * The adding problem (npm run adding): trains an LLTM on a task that needs
 * memory. Each sequence has T steps of two features, a value in [0, 1) and a
 * marker; exactly two steps are marked, one in each half, and the target is
 * the mean of the two marked values. The prediction is the first unit of the
 * final h (the model of ../shared/bench/torch_train.py). A model without
 * memory can do no better than predicting the mean target (the baseline).
 *
 * A training step is the library's autograd (LLTM module, mseLoss, Adam),
 * with nothing read back: the losses are summed on the device and read when
 * the progress line is drawn. On CUDA the step is captured once and replayed
 * (compileStep; --no-graph runs it eagerly every time).
 *
 * Seeded and reproducible: runs --steps steps (3000), or stops earlier at a
 * time budget only when --max-seconds is given (the progress bar then shows
 * the budget too). On a terminal the progress line redraws in place; when
 * the output is a file or a pipe it prints a plain line every few seconds.
 * At the end it prints the held-out loss beside the baseline's and writes a
 * loss curve (SVG, log scale) and a checkpoint (safetensors) to the output folder.
 *
 * usage: bun scripts/train.ts [--device cpu|cuda] [--steps 3000] [--seq 20] [-b 64] [-s 32]
 *                             [--lr 0.01] [--seed 0] [--out out] [--json FILE] [--max-seconds S] [--no-graph] [--no-fused]
 * (--no-fused: the optimizer stepped parameter by parameter rather than over one flat buffer)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import {
  Adam, compileStep, cuda, type DeviceLike, LLTM, mseLoss, noGrad, Random, saveCheckpoint, Tensor,
} from "../ts/index.ts";
import { fail, intArg, parseArgs } from "./args.ts";
import { lossPlot } from "./loss_plot.ts";
import { drawProgress, LossMeter, timeText, tty } from "./progress.ts";

const usage =
  "usage: bun scripts/train.ts [--device cpu|cuda] [--steps 3000] [--seq 20] [-b 64] [-s 32] [--lr 0.01] [--seed 0] [--out out] " +
  "[--json FILE] [--max-seconds S] [--no-graph] [--no-fused]";
const args = parseArgs(process.argv.slice(2), {
  values: ["--device", "--steps", "--seq", "-b", "-s", "--lr", "--seed", "--out", "--json", "--max-seconds"],
  flags: ["--no-graph", "--no-fused"],
}, usage);
const device = (args.values.get("--device") ?? (cuda.isAvailable() ? "cuda" : "cpu")) as DeviceLike;
const trainSteps = intArg(args, "--steps", 3000, usage);
const T = intArg(args, "--seq", 20, usage);
const B = intArg(args, "-b", 64, usage);
const S = intArg(args, "-s", 32, usage);
const lr = Number(args.values.get("--lr") ?? 0.01);
const seed = Number(args.values.get("--seed") ?? 0);
const outDir = args.values.get("--out") ?? "out";
const budget = args.values.has("--max-seconds") ? Number(args.values.get("--max-seconds")) : undefined;
if (!(lr > 0)) fail(`--lr must be positive, got ${args.values.get("--lr")}`, usage);
if (budget !== undefined && !(budget > 0)) fail(`--max-seconds must be positive, got ${args.values.get("--max-seconds")}`, usage);
const F = 2;

interface Batch {
  inputs: Float32Array; // [T, B, 2]
  targets: Float32Array; // [B]
}

/** Values drawn as float32 (24 bits, as torch.rand's), so that none rounds up to 1 when stored. */
function makeBatch(rng: Random, batch: number): Batch {
  const inputs = new Float32Array(T * batch * F);
  const targets = new Float32Array(batch);
  const half = Math.floor(T / 2);
  for (let b = 0; b < batch; b++) {
    const first = Math.floor(rng.uniformFloat32() * half), second = half + Math.floor(rng.uniformFloat32() * (T - half));
    let sum = 0;
    for (let t = 0; t < T; t++) {
      const v = rng.uniformFloat32();
      const marked = t === first || t === second;
      inputs[(t * batch + b) * F] = v;
      inputs[(t * batch + b) * F + 1] = marked ? 1 : 0;
      if (marked) sum += v;
    }
    targets[b] = sum / 2;
  }
  return { inputs, targets };
}

const graph = !args.flags.has("--no-graph");
using model = new LLTM(F, S, { device, seed });
using optimizer = new Adam(model.parameters(), { lr, capturable: graph, fused: !args.flags.has("--no-fused") });
const rng = new Random(seed + 1);
const heldOut = makeBatch(new Random(seed + 2), 1024);
const baseline = (() => {
  const mean = heldOut.targets.reduce((a, b) => a + b, 0) / heldOut.targets.length;
  return heldOut.targets.reduce((a, t) => a + (t - mean) ** 2, 0) / heldOut.targets.length;
})();

/** The mean squared error of the predictions (the first unit of h_T) against the targets [B]. */
function predictionLoss(xs: Tensor, targets: Tensor): Tensor {
  using out = model.forward(xs);
  using first = out.h.narrow(2, 0, 1);
  using prediction = first.reshape([targets.shape[0]!]);
  return mseLoss(prediction, targets);
}

function evaluate(): number {
  using xs = Tensor.fromTypedArray(heldOut.inputs, [T, 1024, F], { device });
  using ys = Tensor.fromTypedArray(heldOut.targets, [1024], { device });
  return noGrad(() => {
    using l = predictionLoss(xs, ys);
    return l.item();
  });
}

using lossSum = Tensor.zeros([1], { device });
// One training step: nothing read back, the loss added into lossSum on the device.
using trainStep = compileStep((xs: Tensor, ys: Tensor) => {
  optimizer.zeroGrad();
  using l = predictionLoss(xs, ys);
  l.backward();
  optimizer.step();
  noGrad(() => lossSum.add_(l));
}, { device, enabled: graph });

console.log(`lltm: training an LLTM (S=${S}) on the adding problem (T=${T}, batch ${B}) on ${device}, ${trainSteps} steps` +
  (budget === undefined ? "" : ` or ${budget} s, whichever comes first`));
const start = performance.now();
// Redraws on a terminal; elsewhere (CI logs, pipes) one plain line every few seconds.
const progressEvery = tty ? 100 : 5000;
let last = start, done = 0, stoppedByBudget = false;

function progress(step: number, value: number, now: number, final: boolean): void {
  const elapsed = (now - start) / 1000;
  const rate = step / Math.max(elapsed, 1e-9);
  const text = `step ${step}/${trainSteps}  loss ${value.toFixed(4)}  ${rate.toFixed(0)} steps/s  ${timeText(elapsed, budget)}`;
  drawProgress(text, step, trainSteps, elapsed, budget, final);
}

/** Steps before the steady rate's clock starts, as torch_train.py leaves out its warm-up (and its capture). */
const WARM_UP = 20;
const onGpu = String(device).startsWith("cuda");
let warmEnd: number | undefined;
const curveEvery = Math.max(1, Math.floor(trainSteps / 300));
using losses = new LossMeter(lossSum, Math.ceil(trainSteps / curveEvery) + 1);
for (let step = 1; step <= trainSteps; step++) {
  const batch = makeBatch(rng, B);
  // In pinned memory on a GPU: the step copies it in without waiting, so the host makes the next batch meanwhile.
  using xs = Tensor.fromTypedArray(batch.inputs, [T, B, F], { pinMemory: onGpu });
  using ys = Tensor.fromTypedArray(batch.targets, [B], { pinMemory: onGpu });
  trainStep(xs, ys);
  losses.counted();
  done = step;
  if (step === WARM_UP) {
    if (onGpu) cuda.synchronize(device);
    warmEnd = performance.now();
  }
  const now = performance.now();
  stoppedByBudget = budget !== undefined && (now - start) / 1000 > budget && step < trainSteps;
  const final = step === trainSteps || stoppedByBudget;
  if (step % curveEvery === 0 || final) losses.close();
  if (now - last > progressEvery || final) {
    last = now;
    progress(step, losses.last, now, final);
  }
  if (stoppedByBudget) {
    console.log(`stopped at step ${step} of ${trainSteps}: the ${budget} s budget (--max-seconds) ran out`);
    break;
  }
}
const end = performance.now();
const seconds = (end - start) / 1000;
/** Steps per second after the warm-up (the step is then captured), with the device done: what torch_train.py reports. */
const steadyRate = warmEnd !== undefined && done > WARM_UP ? (done - WARM_UP) / ((end - warmEnd) / 1000) : undefined;
const finalLoss = evaluate();
console.log(`held-out loss ${finalLoss.toFixed(5)}  (baseline, the mean target: ${baseline.toFixed(5)}; ratio ${(finalLoss / baseline).toFixed(3)})`);
console.log(`${done} steps in ${seconds.toFixed(1)} s (${(done / seconds).toFixed(0)} steps/s${graph && onGpu ? ", the step captured once and replayed" : ""}` +
  `${steadyRate === undefined ? "" : `; ${steadyRate.toFixed(0)} steps/s after ${WARM_UP} warm-up steps`})`);

mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, "loss.svg"), lossPlot(losses.curve, baseline, `LLTM on the adding problem (T=${T}, S=${S}): training loss, ${done} steps`));
saveCheckpoint(join(outDir, "lltm.safetensors"), Object.fromEntries(model.namedParameters()), {
  task: "adding", input_features: String(F), state_size: String(S), steps: String(T),
});
console.log(`wrote ${join(outDir, "loss.svg")} and ${join(outDir, "lltm.safetensors")}`);

const jsonPath = args.values.get("--json");
if (jsonPath) {
  writeFileSync(jsonPath, JSON.stringify({
    final_loss: finalLoss, baseline_loss: baseline, seconds, steps: done, steps_per_second: done / seconds, steady_steps_per_second: steadyRate, graph, fused: optimizer.flatBuffers.length > 0,
    stopped_by_budget: stoppedByBudget, device: String(device),
  }, null, 1));
}
