/**
 * The adding problem (npm run adding): trains an LLTM on a task that needs
 * memory. Each sequence has T steps of two features, a value in [0, 1) and a
 * marker; exactly two steps are marked, one in each half, and the target is
 * the mean of the two marked values. The prediction is the first unit of the
 * final h. A model without memory can do no better than predicting the mean
 * target (the baseline).
 *
 * Seeded and reproducible: runs --steps steps (3000), or stops earlier at a
 * time budget only when --max-seconds is given (the progress bar then shows
 * the budget too). On a terminal the progress line redraws in place; when
 * the output is a file or a pipe it prints a plain line every few seconds.
 * At the end it prints the held-out loss beside the baseline's and writes a
 * loss curve (SVG, log scale) and a checkpoint (safetensors) to the output folder.
 *
 * usage: bun scripts/train.ts [--device cpu|cuda] [--steps 3000] [--seq 20] [-b 64] [-s 32]
 *                             [--lr 0.01] [--seed 0] [--out out] [--json FILE] [--max-seconds S]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { Adam, cuda, type DeviceLike, LLTMLayer, Random, saveCheckpoint, Tensor } from "../ts/index.ts";
import { fail, intArg, parseArgs } from "./args.ts";
import { lossPlot } from "./loss_plot.ts";

const usage =
  "usage: bun scripts/train.ts [--device cpu|cuda] [--steps 3000] [--seq 20] [-b 64] [-s 32] [--lr 0.01] [--seed 0] [--out out] [--json FILE] [--max-seconds S]";
const args = parseArgs(process.argv.slice(2), {
  values: ["--device", "--steps", "--seq", "-b", "-s", "--lr", "--seed", "--out", "--json", "--max-seconds"],
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
  targets: Float64Array; // [B]
}

function makeBatch(rng: Random, batch: number): Batch {
  const inputs = new Float32Array(T * batch * F);
  const targets = new Float64Array(batch);
  const half = Math.floor(T / 2);
  for (let b = 0; b < batch; b++) {
    const first = Math.floor(rng.uniform() * half), second = half + Math.floor(rng.uniform() * (T - half));
    let sum = 0;
    for (let t = 0; t < T; t++) {
      const v = rng.uniform();
      const marked = t === first || t === second;
      inputs[(t * batch + b) * F] = v;
      inputs[(t * batch + b) * F + 1] = marked ? 1 : 0;
      if (marked) sum += v;
    }
    targets[b] = sum / 2;
  }
  return { inputs, targets };
}

/** Mean squared error of the predictions (first unit of h_T) and, when `grad` is given, its gradient with respect to h_T. */
function loss(hT: ArrayLike<number>, targets: Float64Array, grad?: Float32Array): number {
  let sum = 0;
  for (let b = 0; b < targets.length; b++) {
    const d = hT[b * S]! - targets[b]!;
    sum += d * d;
    if (grad) grad[b * S] = (2 * d) / targets.length;
  }
  return sum / targets.length;
}

using model = new LLTMLayer(F, S, { device, seed });
using optimizer = new Adam(model.parameters(), { lr });
const rng = new Random(seed + 1);
const heldOut = makeBatch(new Random(seed + 2), 1024);
const baseline = (() => {
  const mean = heldOut.targets.reduce((a, b) => a + b, 0) / heldOut.targets.length;
  return heldOut.targets.reduce((a, t) => a + (t - mean) ** 2, 0) / heldOut.targets.length;
})();

function evaluate(): number {
  using xs = Tensor.fromTypedArray(heldOut.inputs, [T, 1024, F], { device });
  const [h0, c0] = model.initialState(1024);
  using seq = model.sequence(xs, [h0, c0], { grad: false });
  const value = loss(seq.h.toTypedArray(), heldOut.targets);
  h0.dispose();
  c0.dispose();
  return value;
}

console.log(`lltm: training an LLTM (S=${S}) on the adding problem (T=${T}, batch ${B}) on ${device}, ${trainSteps} steps` +
  (budget === undefined ? "" : ` or ${budget} s, whichever comes first`));
const curve: number[] = [];
const start = performance.now();
const tty = process.stdout.isTTY === true;
// Redraws on a terminal; elsewhere (CI logs, pipes) one plain line every few seconds.
const progressEvery = tty ? 100 : 5000;
let last = start, done = 0, stoppedByBudget = false;

function progress(step: number, value: number, now: number, final: boolean): void {
  const elapsed = (now - start) / 1000;
  const rate = step / Math.max(elapsed, 1e-9);
  const time = budget === undefined ? `${elapsed.toFixed(1)} s` : `${elapsed.toFixed(1)}/${budget} s budget`;
  const text = `step ${step}/${trainSteps}  loss ${value.toFixed(4)}  ${rate.toFixed(0)} steps/s  ${time}`;
  if (!tty) {
    console.log(text);
    return;
  }
  // The bar fills with the steps, or with the budget when that runs out first.
  const fraction = Math.min(1, Math.max(step / trainSteps, budget === undefined ? 0 : elapsed / budget));
  const width = 30, filled = Math.round(fraction * width);
  process.stdout.write(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${text}\x1b[K` + (final ? "\n" : ""));
}

const [h0, c0] = model.initialState(B);
using gradOutputsZero = Tensor.zeros([B, S], { device });
for (let step = 1; step <= trainSteps; step++) {
  const batch = makeBatch(rng, B);
  using xs = Tensor.fromTypedArray(batch.inputs, [T, B, F], { device });
  using seq = model.sequence(xs, [h0, c0]);
  const grad = new Float32Array(B * S);
  const value = loss(seq.h.toTypedArray(), batch.targets, grad);
  using gradH = Tensor.fromTypedArray(grad, [B, S], { device });
  model.zeroGrad();
  using grads = seq.backward(undefined, [gradH, gradOutputsZero]);
  optimizer.step();
  curve.push(value);
  done = step;
  const now = performance.now();
  stoppedByBudget = budget !== undefined && (now - start) / 1000 > budget && step < trainSteps;
  const final = step === trainSteps || stoppedByBudget;
  if (now - last > progressEvery || final) {
    last = now;
    progress(step, value, now, final);
  }
  if (stoppedByBudget) {
    console.log(`stopped at step ${step} of ${trainSteps}: the ${budget} s budget (--max-seconds) ran out`);
    break;
  }
}
h0.dispose();
c0.dispose();
const seconds = (performance.now() - start) / 1000;
const finalLoss = evaluate();
console.log(`held-out loss ${finalLoss.toFixed(5)}  (baseline, the mean target: ${baseline.toFixed(5)}; ratio ${(finalLoss / baseline).toFixed(3)})`);
console.log(`${done} steps in ${seconds.toFixed(1)} s`);

mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, "loss.svg"), lossPlot(curve, baseline, `LLTM on the adding problem (T=${T}, S=${S}): training loss, ${done} steps`));
saveCheckpoint(join(outDir, "lltm.safetensors"), { weights: model.weights, bias: model.bias }, {
  task: "adding", input_features: String(F), state_size: String(S), steps: String(T),
});
console.log(`wrote ${join(outDir, "loss.svg")} and ${join(outDir, "lltm.safetensors")}`);

const jsonPath = args.values.get("--json");
if (jsonPath) {
  writeFileSync(jsonPath, JSON.stringify({
    final_loss: finalLoss, baseline_loss: baseline, seconds, steps: done, stopped_by_budget: stoppedByBudget, device: String(device),
  }, null, 1));
}
