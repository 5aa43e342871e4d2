/**
 * The main job's character model, lltm beside PyTorch on the CPU: both train
 * from the same initial weights on the same batches (lltm draws the offsets
 * and writes them, with the text's ids and the recipe, for the PyTorch side)
 * for the same number of steps, with the same recipe (scripts/charlm_train.ts),
 * one after the other in this run; then prints both validation losses, their
 * relative difference, and both speeds in tokens/s. PyTorch's model is the
 * LLTM of scripts/torch_lltm.py, eager (scripts/torch_charlm_train.py); with
 * --torch-lstm it also times ../shared/bench/torch_charlm.py's nn.LSTM model
 * (eager, random tokens) at the same sizes, for reference.
 *
 * usage: bun scripts/compare_charlm.ts [--steps 400] [--seq 64] [-b 32] [-s 128] [-e 32] [--layers 2] [--lr 0.003]
 *                                      [--seed 0] [--out out] [--python python3] [--torch-threads N] [--torch-lstm FILE] [--json FILE]
 *
 * PyTorch runs with --torch-threads threads (default: lltm's); on a machine other work keeps busy, one is
 * its better choice (its OpenMP threads spin waiting for each other).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { backendInfo, Random, saveCheckpoint, Tensor } from "../ts/index.ts";
import { intArg, parseArgs } from "./args.ts";
import { CharLM } from "./charlm_model.ts";
import { batchAt, loadCorpus, recipe, trainer, validationLoss, validationOffsets } from "./charlm_train.ts";

const usage = "usage: bun scripts/compare_charlm.ts [--steps 400] [--seq 64] [-b 32] [-s 128] [-e 32] [--layers 2] [--lr 0.003] " +
  "[--seed 0] [--out out] [--python python3] [--torch-threads N] [--torch-lstm FILE] [--json FILE]";
const args = parseArgs(process.argv.slice(2), {
  values: ["--steps", "--seq", "-b", "-s", "-e", "--layers", "--lr", "--seed", "--out", "--python", "--torch-threads", "--torch-lstm", "--json"],
}, usage);
// The main job's CPU configuration.
const steps = intArg(args, "--steps", 400, usage);
const T = intArg(args, "--seq", 64, usage);
const B = intArg(args, "-b", 32, usage);
const S = intArg(args, "-s", 128, usage);
const E = intArg(args, "-e", 32, usage);
const layers = intArg(args, "--layers", 2, usage);
const seed = intArg(args, "--seed", 0, usage);
const lr = Number(args.values.get("--lr") ?? 0.003);
const outDir = args.values.get("--out") ?? "out";
const python = args.values.get("--python") ?? "python3";
const device = "cpu";
const threads = backendInfo().threads;
const torchThreads = intArg(args, "--torch-threads", threads, usage);
const torchEnv = { ...process.env, OMP_NUM_THREADS: String(torchThreads), OPENBLAS_NUM_THREADS: String(torchThreads) };

const { vocabulary, train, valid } = loadCorpus();
const rng = new Random(seed + 1);
const offsets = Int32Array.from({ length: steps * B }, () => Math.floor(rng.uniform() * (train.length - T - 1)));
const validOffsets = validationOffsets(valid, T, B, 4);

mkdirSync(outDir, { recursive: true });
const initPath = join(outDir, "compare_init.safetensors"), batchesPath = join(outDir, "compare_batches.safetensors");
using model = new CharLM({ vocabulary, embedding: E, stateSize: S, layers, dropout: 0 }, { device, seed });
model.save(initPath, model.metadata());
{
  using trainIds = Tensor.fromTypedArray(train.slice(), [train.length]);
  using validIds = Tensor.fromTypedArray(valid.slice(), [valid.length]);
  using offsetsTensor = Tensor.fromTypedArray(offsets, [steps, B]);
  using validTensor = Tensor.fromTypedArray(Int32Array.from(validOffsets.flat()), [validOffsets.length, B]);
  saveCheckpoint(batchesPath, { train: trainIds, valid: validIds, offsets: offsetsTensor, valid_offsets: validTensor }, {
    T: String(T), steps: String(steps), lr: String(lr), weightDecay: String(recipe.weightDecay),
    etaMinFraction: String(recipe.etaMinFraction), clipNorm: String(recipe.clipNorm),
  });
}
console.log(`char LM ${layers}×LLTM ${S}, embedding ${E}, T=${T}, B=${B}, ${steps} steps, lr ${lr}, on the CPU (${threads} threads)`);

// lltm: the steps timed as the main job times them (the loss summed on the device, read at the end).
using training = trainer(model, lr, steps);
using lossSum = Tensor.zeros([1]);
const start = performance.now(), startCpu = process.cpuUsage();
for (let step = 0; step < steps; step++) {
  const { x, y } = batchAt(train, offsets.subarray(step * B, (step + 1) * B), T, device);
  await training.step(x, y, lossSum);
  x.dispose();
  y.dispose();
}
const lltmSeconds = (performance.now() - start) / 1000;
const cpu = process.cpuUsage(startCpu), lltmCpuSeconds = (cpu.user + cpu.system) / 1e6;
const lltm = {
  valid_nats: validationLoss(model, valid, validOffsets, T, device), seconds: lltmSeconds, cpu_seconds: lltmCpuSeconds,
  tokens_per_second: (steps * T * B) / lltmSeconds,
};
interface Result {
  valid_nats: number;
  tokens_per_second: number;
  seconds: number;
  cpu_seconds: number;
}
// CPU seconds (every thread's) beside the wall clock: on a machine shared with other work, the wall clock measures the others too.
const line = (name: string, r: Result) =>
  console.log(
    `${name.padEnd(32)} validation ${r.valid_nats.toFixed(4)} nats/char  ${(r.tokens_per_second / 1000).toFixed(1)} k tokens/s  ` +
      `(${r.seconds.toFixed(1)} s, ${r.cpu_seconds.toFixed(1)} CPU s: ${((steps * T * B) / r.cpu_seconds / 1000).toFixed(1)} k tokens per CPU s)`,
  );
line("lltm", lltm);

const script = fileURLToPath(new URL("./torch_charlm_train.py", import.meta.url));
const r = spawnSync(python, [script, initPath, batchesPath, "--threads", String(torchThreads)], { encoding: "utf8", env: torchEnv });
if (r.status !== 0) {
  console.error(`${python} ${script} failed (status ${r.status}):\n${r.stderr}`);
  process.exit(1);
}
const torch = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Result & { torch: string };
line(`PyTorch ${torch.torch} LLTM, ${torchThreads} thread${torchThreads > 1 ? "s" : ""}`, torch);
const difference = (lltm.valid_nats - torch.valid_nats) / torch.valid_nats;
console.log(
  `validation loss: lltm ${(100 * difference).toFixed(2)}% from PyTorch's (within 2%: ${Math.abs(difference) <= 0.02 ? "yes" : "NO"}); ` +
    `speed: lltm ${(lltm.tokens_per_second / torch.tokens_per_second).toFixed(1)}× PyTorch's LLTM ` +
    `(${(torch.cpu_seconds / lltm.cpu_seconds).toFixed(1)}× in CPU time)`,
);

let lstm: { tokens_per_second: number } | undefined;
const lstmScript = args.values.get("--torch-lstm");
if (lstmScript !== undefined) {
  const jsonPath = join(outDir, "compare_torch_lstm.json");
  const l = spawnSync(python, [
    lstmScript, "--device", "cpu", "--variants", "eager", "--layers", String(layers), "-s", String(S), "--seq", String(T),
    "-b", String(B), "--emb", String(E), "--vocab", String(vocabulary.length), "--steps", String(Math.min(steps, 100)), "--json", jsonPath,
  ], { encoding: "utf8", env: torchEnv });
  if (l.status !== 0) {
    console.error(`${lstmScript} failed (status ${l.status}):\n${l.stderr}`);
    process.exit(1);
  }
  const [result] = (JSON.parse(readFileSync(jsonPath, "utf8")) as { results: { tokens_per_s: number }[] }).results;
  lstm = { tokens_per_second: result!.tokens_per_s };
  console.log(`PyTorch nn.LSTM (eager)  ${(lstm.tokens_per_second / 1000).toFixed(1)} k tokens/s: lltm ${(lltm.tokens_per_second / lstm.tokens_per_second).toFixed(1)}× it`);
}

const jsonOut = args.values.get("--json");
if (jsonOut) {
  writeFileSync(jsonOut, JSON.stringify({ config: { layers, S, E, T, B, steps, lr, threads, torchThreads }, lltm, torch_lltm: torch, torch_lstm: lstm, difference }, null, 1));
}
