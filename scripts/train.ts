/**
 * The main job: trains an LLTM on the adding problem, a task that needs
 * memory. Each sequence has T steps of two features, a value in [0, 1) and a
 * marker; exactly two steps are marked, one in each half, and the target is
 * the mean of the two marked values. The prediction is the first unit of the
 * final h. A model without memory can do no better than predicting the mean
 * target (the baseline).
 *
 * Seeded and reproducible; shows a progress bar; at the end prints the
 * held-out loss beside the baseline's and writes a loss curve (SVG) and a
 * checkpoint (safetensors) to the output folder.
 *
 * usage: bun scripts/train.ts [--device cpu|cuda] [--steps 3000] [--seq 20] [-b 64] [-s 32]
 *                             [--lr 0.01] [--seed 0] [--out out] [--json FILE] [--max-seconds 50]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { Adam, cuda, type DeviceLike, LLTM, Random, saveCheckpoint, Tensor } from "../ts/index.ts";
import { fail, intArg, parseArgs } from "./args.ts";

const usage =
  "usage: bun scripts/train.ts [--device cpu|cuda] [--steps 3000] [--seq 20] [-b 64] [-s 32] [--lr 0.01] [--seed 0] [--out out] [--json FILE] [--max-seconds 50]";
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
const maxSeconds = Number(args.values.get("--max-seconds") ?? 50);
if (!(lr > 0)) fail(`--lr must be positive, got ${args.values.get("--lr")}`, usage);
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
function loss(hT: Float32Array | Float64Array, targets: Float64Array, grad?: Float32Array): number {
  let sum = 0;
  for (let b = 0; b < targets.length; b++) {
    const d = hT[b * S]! - targets[b]!;
    sum += d * d;
    if (grad) grad[b * S] = (2 * d) / targets.length;
  }
  return sum / targets.length;
}

using model = new LLTM(F, S, { device, seed });
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

console.log(`lltm: training an LLTM (S=${S}) on the adding problem (T=${T}, batch ${B}) on ${device}`);
const curve: number[] = [];
const start = performance.now();
let last = start, done = 0;
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
  if (now - last > 100 || step === trainSteps) {
    last = now;
    const rate = step / ((now - start) / 1000);
    const width = 30, filled = Math.round((step / trainSteps) * width);
    const bar = "#".repeat(filled) + ".".repeat(width - filled);
    process.stdout.write(`\r[${bar}] step ${step}/${trainSteps}  loss ${value.toFixed(4)}  ${rate.toFixed(0)} steps/s `);
  }
  if ((now - start) / 1000 > maxSeconds) {
    process.stdout.write(`\nstopping at the ${maxSeconds} s budget`);
    break;
  }
}
h0.dispose();
c0.dispose();
const seconds = (performance.now() - start) / 1000;
const finalLoss = evaluate();
console.log(`\nheld-out loss ${finalLoss.toFixed(5)}  (baseline, the mean target: ${baseline.toFixed(5)}; ratio ${(finalLoss / baseline).toFixed(3)})`);
console.log(`${done} steps in ${seconds.toFixed(1)} s`);

mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, "loss.svg"), lossCurve(curve, baseline));
saveCheckpoint(join(outDir, "lltm.safetensors"), { weights: model.weights, bias: model.bias }, {
  task: "adding", input_features: String(F), state_size: String(S), steps: String(T),
});
console.log(`wrote ${join(outDir, "loss.svg")} and ${join(outDir, "lltm.safetensors")}`);

const jsonPath = args.values.get("--json");
if (jsonPath) {
  writeFileSync(jsonPath, JSON.stringify({ final_loss: finalLoss, baseline_loss: baseline, seconds, device: String(device) }, null, 1));
}

/** The training loss per step (smoothed) and the baseline, as an SVG line chart. */
function lossCurve(values: number[], base: number): string {
  const W = 640, H = 360, pad = 48;
  const smooth: number[] = [];
  let avg = values[0] ?? 0;
  for (const v of values) smooth.push((avg = 0.95 * avg + 0.05 * v));
  const top = Math.max(base * 1.5, ...smooth);
  const x = (i: number) => pad + ((W - 2 * pad) * i) / Math.max(1, smooth.length - 1);
  const y = (v: number) => H - pad - ((H - 2 * pad) * Math.min(v, top)) / top;
  const points = smooth.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">LLTM on the adding problem: training loss (smoothed)</text>
<line x1="${pad}" y1="${H - pad}" x2="${W - pad}" y2="${H - pad}" stroke="black"/>
<line x1="${pad}" y1="${pad}" x2="${pad}" y2="${H - pad}" stroke="black"/>
<text x="${W / 2}" y="${H - 12}" text-anchor="middle">step (${smooth.length})</text>
<text x="${pad - 6}" y="${y(top) + 4}" text-anchor="end">${top.toFixed(3)}</text>
<text x="${pad - 6}" y="${H - pad + 4}" text-anchor="end">0</text>
<line x1="${pad}" y1="${y(base).toFixed(1)}" x2="${W - pad}" y2="${y(base).toFixed(1)}" stroke="gray" stroke-dasharray="6 4"/>
<text x="${W - pad}" y="${(y(base) - 6).toFixed(1)}" text-anchor="end" fill="gray">baseline ${base.toFixed(4)}</text>
<polyline fill="none" stroke="steelblue" stroke-width="1.5" points="${points}"/>
</svg>
`;
}
