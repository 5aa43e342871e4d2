/**
 * Times the char LM's training step as ../shared/bench/torch_charlm.py does
 * (random tokens made on the device beforehand, Embedding -> L×LLTM ->
 * Linear -> cross-entropy, clipping at 1.0, AdamW with a cosine schedule):
 * tokens/s over --steps steps after 10 untimed ones, with the step captured
 * once and replayed (compileStep) and run eagerly.
 *
 * usage: bun scripts/bench_train.ts [--device cuda] [--layers 2] [-s 512] [--seq 100] [-b 64] [--vocab 65] [-e 128]
 *                                   [--steps 200] [--json FILE]
 */
import { writeFileSync } from "node:fs";

import {
  AdamW, clipGradNorm_, compileStep, CosineAnnealingLR, cuda, type DeviceLike, Random, Tensor,
} from "../ts/index.ts";
import { intArg, parseArgs } from "./args.ts";
import { CharLM } from "./charlm_model.ts";

const usage = "usage: bun scripts/bench_train.ts [--device cuda] [--layers 2] [-s 512] [--seq 100] [-b 64] [--vocab 65] [-e 128] " +
  "[--steps 200] [--json FILE]";
const args = parseArgs(process.argv.slice(2), {
  values: ["--device", "--layers", "-s", "--seq", "-b", "--vocab", "-e", "--steps", "--json"],
}, usage);
const device = (args.values.get("--device") ?? (cuda.isAvailable() ? "cuda" : "cpu")) as DeviceLike;
const layers = intArg(args, "--layers", 2, usage), S = intArg(args, "-s", 512, usage), T = intArg(args, "--seq", 100, usage);
const B = intArg(args, "-b", 64, usage), V = intArg(args, "--vocab", 65, usage), E = intArg(args, "-e", 128, usage);
const steps = intArg(args, "--steps", 200, usage);
const vocabulary = Array.from({ length: V }, (_, i) => String.fromCharCode(33 + i)).join("");

/** Eight batches of random tokens on the device, used in turn. */
function batches(): [Tensor, Tensor][] {
  const rng = new Random(1);
  return Array.from({ length: 8 }, () => {
    const xy = Int32Array.from({ length: (T + 1) * B }, () => Math.floor(rng.uniform() * V));
    return [
      Tensor.fromTypedArray(xy.subarray(0, T * B), [T, B], { device }),
      Tensor.fromTypedArray(xy.subarray(B), [T, B], { device }),
    ];
  });
}

function measure(graph: boolean): { tokens_per_s: number; ms_per_step: number } {
  using model = new CharLM({ vocabulary, embedding: E, stateSize: S, layers, dropout: 0 }, { device, seed: 0 });
  using optimizer = new AdamW(model.namedParameters(), { lr: 2e-3, weightDecay: 0.01, capturable: graph });
  const schedule = new CosineAnnealingLR(optimizer, { tMax: steps + 10 });
  const data = batches();
  using lossSum = Tensor.zeros([1], { device });
  using step = compileStep((x: Tensor, y: Tensor) => {
    {
      using loss = model.loss(x, y);
      loss.backward();
    }
    clipGradNorm_(model.parameters(), 1).dispose();
    optimizer.step();
    optimizer.zeroGrad();
  }, { device, enabled: graph });
  const run = (i: number) => {
    const [x, y] = data[i % data.length]!;
    step(x, y);
    schedule.step();
  };
  for (let i = 0; i < 10; i++) run(i);
  lossSum.item();
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) run(i);
  lossSum.item();
  const seconds = (performance.now() - t0) / 1000;
  for (const [x, y] of data) {
    x.dispose();
    y.dispose();
  }
  return { tokens_per_s: (B * T * steps) / seconds, ms_per_step: (1000 * seconds) / steps };
}

const results = [];
for (const graph of String(device).startsWith("cuda") ? [true, false] : [false]) {
  const r = { variant: graph ? "graph" : "eager", layers, state: S, seq: T, batch: B, vocab: V, embedding: E, steps, ...measure(graph) };
  results.push(r);
  console.log(`lltm charlm ${r.variant} ${layers}x${S} T=${T} B=${B}: ${r.ms_per_step.toFixed(2)} ms/step, ${(r.tokens_per_s / 1e6).toFixed(2)} M tokens/s`);
}
const json = args.values.get("--json");
if (json) writeFileSync(json, JSON.stringify({ tool: "lltm-bench-train", device: String(device), results }, null, 1));
