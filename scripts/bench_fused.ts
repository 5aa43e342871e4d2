/**
 * The main job's training step with the optimizer fused and per parameter, in
 * one run: two copies of the char LM (the same seed) trained on the same
 * batches of Genesis–Joshua with the main job's recipe (AdamW, cosine
 * schedule, clipping at 1), their steps interleaved (the order alternating
 * from step to step) so that both see the same machine. Prints, per variant,
 * the median and mean of the whole step and of its optimizer part (clipping,
 * the update and zeroGrad), the steps per second, and the native launches of
 * that part; then how far apart the two models' weights ended (the clipping
 * norm is summed in another order when fused, so they agree to rounding).
 *
 * usage: bun scripts/bench_fused.ts [--device cpu|cuda] [--steps 200] [--seq 64] [-b 32] [-s 128] [-e 32] [--layers 2] [--json FILE]
 */
import { writeFileSync } from "node:fs";

import { AdamW, clipGradNorm_, CosineAnnealingLR, cuda, type DeviceLike, Random } from "../ts/index.ts";
import * as native from "../ts/native/index.ts";
import { intArg, parseArgs } from "./args.ts";
import { CharLM } from "./charlm_model.ts";
import { batchAt, loadCorpus, recipe } from "./charlm_train.ts";

const usage = "usage: bun scripts/bench_fused.ts [--device cpu|cuda] [--steps 200] [--seq 64] [-b 32] [-s 128] [-e 32] [--layers 2] [--json FILE]";
const args = parseArgs(process.argv.slice(2), { values: ["--device", "--steps", "--seq", "-b", "-s", "-e", "--layers", "--json"] }, usage);
const device = (args.values.get("--device") ?? "cpu") as DeviceLike;
const steps = intArg(args, "--steps", 200, usage), T = intArg(args, "--seq", 64, usage), B = intArg(args, "-b", 32, usage);
const S = intArg(args, "-s", 128, usage), E = intArg(args, "-e", 32, usage), layers = intArg(args, "--layers", 2, usage);
const lr = 0.003, warmup = 5;
const gpu = String(device).startsWith("cuda");

const { vocabulary, train } = loadCorpus();
const rng = new Random(1);
const offsets = Array.from({ length: steps + warmup }, () => Array.from({ length: B }, () => Math.floor(rng.uniform() * (train.length - T - 1))));

const ops = ["ADAM_STEP", "AXPY", "SUM_SQUARES", "SCALE_BY_NORM", "FILL", "COPY"] as const;
const launches = () => ops.reduce((n, o) => n + native.runCount(native.op(o)), 0);

interface Variant {
  name: string;
  model: CharLM;
  optimizer: AdamW;
  schedule: CosineAnnealingLR;
  stepMs: number[];
  optimizerMs: number[];
  launches: number;
}

function variant(fused: boolean): Variant {
  const model = new CharLM({ vocabulary, embedding: E, stateSize: S, layers, dropout: 0 }, { device, seed: 0 });
  const optimizer = new AdamW(model.namedParameters(), { lr, weightDecay: recipe.weightDecay, fused });
  const schedule = new CosineAnnealingLR(optimizer, { tMax: steps + warmup, etaMin: lr * recipe.etaMinFraction });
  return { name: fused ? "fused" : "per-parameter", model, optimizer, schedule, stepMs: [], optimizerMs: [], launches: 0 };
}

function step(v: Variant, i: number): void {
  const { x, y } = batchAt(train, offsets[i]!, T, device);
  const t0 = performance.now();
  {
    using loss = v.model.loss(x, y);
    loss.backward();
  }
  if (gpu) cuda.synchronize(device);
  const t1 = performance.now(), l0 = launches();
  clipGradNorm_(v.model.parameters(), recipe.clipNorm).dispose();
  v.optimizer.step();
  v.optimizer.zeroGrad();
  const l1 = launches();
  if (gpu) cuda.synchronize(device);
  const t2 = performance.now();
  v.schedule.step();
  x.dispose();
  y.dispose();
  if (i >= warmup) {
    v.stepMs.push(t2 - t0);
    v.optimizerMs.push(t2 - t1);
    v.launches = l1 - l0;
  }
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const variants = [variant(false), variant(true)];
const params = variants[0]!.model.parameters().length;
console.log(`lltm: char LM (embedding ${E}, ${layers}×LLTM ${S}, T=${T}, batch ${B}, ${params} parameters) on ${device}, ${steps} steps after ${warmup}, fused and per-parameter interleaved`);
console.log(`fused flat buffers: ${JSON.stringify(variants[1]!.optimizer.flatBuffers)}`);
for (let i = 0; i < steps + warmup; i++) {
  const order = i % 2 === 0 ? variants : [...variants].reverse();
  for (const v of order) step(v, i);
}
const results = variants.map((v) => ({
  variant: v.name,
  step_ms_median: median(v.stepMs),
  step_ms_mean: mean(v.stepMs),
  steps_per_s: 1000 / mean(v.stepMs),
  optimizer_ms_median: median(v.optimizerMs),
  optimizer_ms_mean: mean(v.optimizerMs),
  optimizer_launches: v.launches,
}));
for (const r of results) {
  console.log(
    `${r.variant.padEnd(14)} step ${r.step_ms_median.toFixed(2)} ms median (${r.step_ms_mean.toFixed(2)} mean, ${r.steps_per_s.toFixed(1)} steps/s); ` +
      `clip+step+zeroGrad ${(r.optimizer_ms_median * 1000).toFixed(0)} µs median (${(r.optimizer_ms_mean * 1000).toFixed(0)} mean), ${r.optimizer_launches} launches`,
  );
}
let maxDiff = 0;
const [a, b] = variants.map((v) => v.model.parameters());
a!.forEach((p, i) => {
  const x = p.toTypedArray(), y = b![i]!.toTypedArray();
  for (let k = 0; k < x.length; k++) maxDiff = Math.max(maxDiff, Math.abs(x[k]! - y[k]!));
});
console.log(`largest difference between the two models' weights after ${steps + warmup} steps: ${maxDiff.toExponential(2)}`);
const json = args.values.get("--json");
if (json) writeFileSync(json, JSON.stringify({ tool: "lltm-bench-fused", device: String(device), steps, T, B, S, E, layers, results, maxDiff }, null, 1));
for (const v of variants) {
  v.optimizer.dispose();
  v.model.dispose();
}
