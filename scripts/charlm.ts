/**
 * The main job: a character-level language model trained on the King James
 * Version's Genesis to Joshua (data/kjv, public domain): an embedding, two
 * stacked LLTM layers and a linear layer to the characters' logits, trained
 * with softmax cross-entropy, AdamW, a cosine learning-rate schedule and
 * gradient clipping, everything on the device (the GPU when there is one).
 *
 * A step reads nothing back: the losses are summed on the device and read
 * when the progress line is drawn. On CUDA the step (forward, backward,
 * clipping and the optimizer's update) is captured once and replayed
 * (compileStep; --no-graph runs it eagerly every time). At the end it prints the validation loss
 * in nats and bits per character beside the unigram model's (each character
 * predicted from its frequency in the training text), writes the training
 * and validation curves (SVG) and a checkpoint (safetensors, with the
 * vocabulary and configuration in its metadata), and samples some text.
 * `bun scripts/generate.ts --checkpoint out/charlm.safetensors` samples more.
 *
 * --dtype bfloat16|float16 trains the model in that type (mixed precision):
 * the optimizer keeps float32 master weights and moments, and float16 adds a
 * GradScaler (dynamic loss scaling, and an eager step: the scaler reads its
 * flag back); the validation loss is computed by the half model, as it would
 * be used.
 *
 * Data-parallel across GPUs (or CPU processes): `lltm-run --nproc-per-node N
 * scripts/charlm.ts ...` starts N ranks, each with its own batch of B windows
 * (drawn from a generator of its own) on its GPU (cuda:LOCAL_RANK), the
 * gradients averaged over the ranks by DistributedDataParallel (NCCL on GPUs,
 * the CPU group otherwise); rank 0 prints, validates, checkpoints and samples.
 *
 * usage: bun scripts/charlm.ts [--device cpu|cuda] [--steps N] [--seq T] [-b B] [-s S] [-e E] [--layers L]
 *                              [--lr 0.003] [--seed 0] [--dtype float32|bfloat16|float16]
 *                              [--precision highest|high|medium] [--out out] [--json FILE] [--max-seconds S]
 *                              [--no-graph] [--no-fused]
 *
 * --precision: how float32 matrix products may round (setFloat32MatmulPrecision). On a GPU the job trains at
 * "high" unless told otherwise: TF32 tensor cores, as PyTorch's float32 nn.LSTM computes under its default
 * torch.backends.cudnn.allow_tf32 = True (--precision highest for exact float32 products); on the CPU, whose
 * products are exact at every setting, at "highest".
 * --no-fused steps the optimizer parameter by parameter instead of over one flat buffer (for comparison).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { cuda, type DeviceLike, distributed, DistributedDataParallel, type FloatDType, Random, Tensor } from "../ts/index.ts";
import { fail, intArg, parseArgs } from "./args.ts";
import { CharLM } from "./charlm_model.ts";
import { batchAt, loadCorpus, trainer, validationLoss, validationOffsets } from "./charlm_train.ts";
import { sample } from "./charlm_sample.ts";
import { lossPlot } from "./loss_plot.ts";
import { applyPrecisionArg } from "./precision_arg.ts";
import { drawProgress, LossMeter, timeText, tty } from "./progress.ts";

const usage = "usage: bun scripts/charlm.ts [--device cpu|cuda] [--steps N] [--seq T] [-b B] [-s S] [-e E] [--layers L] " +
  "[--lr 0.003] [--seed 0] [--dtype float32|bfloat16|float16] [--precision highest|high|medium] [--out out] [--json FILE] " +
  "[--max-seconds S] [--no-graph] [--no-fused]";
const args = parseArgs(process.argv.slice(2), {
  values: ["--device", "--steps", "--seq", "-b", "-s", "-e", "--layers", "--lr", "--seed", "--dtype", "--precision", "--out", "--json", "--max-seconds"],
  flags: ["--no-graph", "--no-fused"],
}, usage);
// Under lltm-run (WORLD_SIZE set), one rank of a data-parallel job on its own GPU.
const worldSize = Number(process.env.WORLD_SIZE ?? 1);
const localRank = Number(process.env.LOCAL_RANK ?? 0);
const requested = args.values.get("--device") ?? (cuda.isAvailable() ? "cuda" : "cpu");
const device = (worldSize > 1 && requested === "cuda" ? `cuda:${localRank}` : requested) as DeviceLike;
const gpu = String(device).startsWith("cuda");
const group = worldSize > 1 ? await distributed.initProcessGroup({ backend: gpu ? "nccl" : "cpu" }) : undefined;
const rank = group?.rank ?? 0;
/** Rank 0 speaks for the job. */
const log = rank === 0 ? (line: string) => console.log(line) : () => {};
// The GPU configuration is the benchmark's (2×512, T=100, B=64); the CPU one finishes in about a minute on 2 cores.
const steps = intArg(args, "--steps", gpu ? 3000 : 400, usage);
const T = intArg(args, "--seq", gpu ? 100 : 64, usage);
const B = intArg(args, "-b", gpu ? 64 : 32, usage);
const S = intArg(args, "-s", gpu ? 512 : 128, usage);
const E = intArg(args, "-e", gpu ? 64 : 32, usage);
const layers = intArg(args, "--layers", 2, usage);
const lr = Number(args.values.get("--lr") ?? 0.003);
const seed = Number(args.values.get("--seed") ?? 0);
const outDir = args.values.get("--out") ?? "out";
const plotPath = join(outDir, "charlm_loss.svg"), checkpointPath = join(outDir, "charlm.safetensors");
const dtype = (args.values.get("--dtype") ?? "float32") as FloatDType;
if (!["float32", "bfloat16", "float16"].includes(dtype)) fail(`--dtype must be float32, bfloat16 or float16, got ${dtype}`, usage);
const precision = applyPrecisionArg(args, usage, gpu ? "high" : "highest");
// On the CPU a budget keeps the job under two minutes however busy the machine is (400 steps take about 30 s on 2 idle cores).
const budget = args.values.has("--max-seconds") ? Number(args.values.get("--max-seconds")) : gpu ? undefined : 100;
if (!(lr > 0)) fail(`--lr must be positive, got ${args.values.get("--lr")}`, usage);
if (budget !== undefined && !(budget > 0)) fail(`--max-seconds must be positive, got ${args.values.get("--max-seconds")}`, usage);

const { text, vocabulary, train, valid } = loadCorpus();
const V = vocabulary.length;

/** The unigram model's cross-entropy on the validation text, in nats per character (add-one smoothed counts). */
function unigramLoss(): number {
  const counts = new Float64Array(V).fill(1);
  for (const id of train) counts[id]!++;
  const total = counts.reduce((a, b) => a + b, 0);
  let nats = 0;
  for (const id of valid) nats -= Math.log(counts[id]! / total);
  return nats / valid.length;
}

// Each rank draws windows of its own: a generator per rank (rank 0's is the single-process one).
const rng = new Random(seed + 1 + 7919 * rank);
const randomOffsets = () => Array.from({ length: B }, () => Math.floor(rng.uniform() * (train.length - T - 1)));
const validOffsets = validationOffsets(valid, T, B, gpu ? 16 : 4);

using model = new CharLM({ vocabulary, embedding: E, stateSize: S, layers, dropout: 0 }, { device, seed });
// Made in float32 from the seed, then rounded: every dtype starts from the same weights.
if (dtype !== "float32") model.to(dtype);
using ddp = group === undefined ? undefined : await DistributedDataParallel.create(model, { group });
using training = trainer(model, lr, steps, {
  device, graph: !args.flags.has("--no-graph"), scale: dtype === "float16", ddp, fused: !args.flags.has("--no-fused"),
});
/** Milliseconds the training loop spent validating, left out of its steady rate. */
let validationMs = 0;
const validate = () => {
  // The training steps queued before it are the loop's time, not the validation's: the host runs ahead of the device.
  if (gpu) cuda.synchronize(device);
  const begin = performance.now();
  const loss = validationLoss(model, valid, validOffsets, T, device);
  validationMs += performance.now() - begin;
  return loss;
};

const unigram = unigramLoss();
const params = model.parameters().reduce((n, p) => n + p.numel, 0);
log(
  `lltm: a character-level language model (embedding ${E}, ${layers}×LLTM ${S}, vocabulary ${V}, ${params} parameters) on ` +
    `Genesis–Joshua (KJV, ${text.length} characters), T=${T}, batch ${B}, on ${device} in ${dtype}` +
    (gpu ? ` (float32 products: ${precision})` : "") + `, ${steps} steps` +
    (budget === undefined ? "" : ` or ${budget} s, whichever comes first`) +
    (group === undefined ? "" : `; data-parallel over ${worldSize} ranks (${group.backend}), batch ${B} each`),
);
const validation: [number, number][] = [];
const drawEvery = tty ? 250 : 5000;
const evalEvery = Math.max(1, Math.floor(steps / 5));
using lossSum = Tensor.zeros([1], { device });
const curveEvery = Math.max(1, Math.floor(steps / 200));
using losses = new LossMeter(lossSum, Math.ceil(steps / curveEvery) + 1);
let done = 0, stoppedByBudget = false;
const start = performance.now();
let last = start;
/** When the first step (which allocates what the others reuse) was handed to the device. */
let firstStepEnd = start;
/** Tokens of one step over every rank. */
const tokensPerStep = worldSize * T * B;

/** Whether the ranks stop at this step for the time budget: any rank past it stops them all, at the same step. */
async function budgetSpent(step: number, now: number): Promise<boolean> {
  const mine = budget !== undefined && (now - start) / 1000 > budget && step < steps;
  if (group === undefined) return mine;
  if (step % curveEvery !== 0) return false;
  using flag = Tensor.full([1], mine ? 1 : 0, { dtype: "int32", device });
  await group.allReduce(flag);
  return flag.item() > 0;
}

function progress(step: number, now: number, final: boolean): void {
  if (rank !== 0) return;
  const elapsed = (now - start) / 1000;
  const rate = (step * tokensPerStep) / Math.max(elapsed, 1e-9);
  const rateText = rate >= 1e6 ? `${(rate / 1e6).toFixed(2)} M` : `${(rate / 1e3).toFixed(1)} k`;
  const text = `step ${step}/${steps}  loss ${losses.last.toFixed(3)}  ${rateText} tokens/s  ${timeText(elapsed, budget)}`;
  drawProgress(text, step, steps, elapsed, budget, final);
}

for (let step = 1; step <= steps; step++) {
  const { x, y } = batchAt(train, randomOffsets(), T, training.inputDevice);
  await training.step(x, y, lossSum);
  x.dispose();
  y.dispose();
  losses.counted();
  done = step;
  if (step === 1) {
    // The peak is a training step's, from the second on: the first allocates what every step reuses.
    if (gpu) {
      cuda.resetPeakMemoryStats(device);
      cuda.synchronize(device);
    }
    firstStepEnd = performance.now();
  }
  if (rank === 0 && (step % evalEvery === 0 || step === steps)) validation.push([step / curveEvery, validate()]);
  const now = performance.now();
  stoppedByBudget = await budgetSpent(step, now);
  const final = step === steps || stoppedByBudget;
  if (step % curveEvery === 0 || final) losses.close();
  if (now - last > drawEvery || final) {
    last = now;
    progress(step, now, final);
  }
  if (stoppedByBudget) {
    log(`stopped at step ${step} of ${steps}: the ${budget} s budget (--max-seconds) ran out`);
    if (rank === 0 && validation.at(-1)?.[0] !== step / curveEvery) validation.push([step / curveEvery, validate()]);
    break;
  }
}
if (rank !== 0) {
  // Rank 0 writes the checkpoint; the others wait for it, as it waits for them.
  await ddp!.save(checkpointPath);
  await distributed.destroyProcessGroup();
  process.exit(0);
}
const end = performance.now();
const seconds = (end - start) / 1000;
// Steps 2..done without the validations: the rate to set beside a benchmark that leaves out its warm-up.
const steadySeconds = (end - firstStepEnd - validationMs) / 1000;
const validLoss = validation.at(-1)![1];
const bits = (nats: number) => nats / Math.LN2;
console.log(
  `validation loss ${validLoss.toFixed(4)} nats/char = ${bits(validLoss).toFixed(3)} bits/char  ` +
    `(unigram baseline ${unigram.toFixed(4)} nats = ${bits(unigram).toFixed(3)} bits/char)`,
);
if (training.scaler.isEnabled()) {
  console.log(`loss scaling: ${training.skipped} steps skipped for infinities, final scale ${training.scaler.getScale()}`);
}
console.log(
  `${done} steps, ${done * tokensPerStep} tokens in ${seconds.toFixed(1)} s (${((done * tokensPerStep) / seconds / 1000).toFixed(1)} k tokens/s` +
    (group === undefined ? ")" : ` over ${worldSize} ranks)`),
);
const memory = gpu
  ? { peak: cuda.maxMemoryAllocated(device), allocated: cuda.memoryAllocated(device), reserved: cuda.memoryReserved(device) }
  : undefined;
if (memory !== undefined) {
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  console.log(
    `device memory: peak ${mib(memory.peak)} allocated during a training step (cuda.maxMemoryAllocated), ` +
      `${mib(memory.allocated)} between steps, ${mib(memory.reserved)} reserved by the pool`,
  );
}

mkdirSync(outDir, { recursive: true });
writeFileSync(
  plotPath,
  lossPlot(losses.curve, unigram, `Character LM on KJV Genesis–Joshua (${layers}×LLTM ${S}): loss in nats/char, per ${curveEvery} steps`, {
    baselineLabel: "unigram baseline",
    validation,
  }),
);
if (ddp === undefined) model.save(checkpointPath, model.metadata());
else await ddp.save(checkpointPath, model.metadata());
console.log(`wrote ${plotPath} and ${checkpointPath}`);
console.log("\nsampled (temperature 0.8, prompt \"And God said\"):\n");
console.log(sample(model, "And God said", 400, { temperature: 0.8, seed }));

const jsonPath = args.values.get("--json");
if (jsonPath) {
  writeFileSync(jsonPath, JSON.stringify({
    valid_nats: validLoss, valid_bits: bits(validLoss), unigram_nats: unigram, unigram_bits: bits(unigram), seconds, steps: done,
    tokens_per_second: (done * tokensPerStep) / seconds,
    steady_tokens_per_second: done > 1 ? ((done - 1) * tokensPerStep) / steadySeconds : undefined, validation_seconds: validationMs / 1000,
    stopped_by_budget: stoppedByBudget, device: String(device), dtype, precision,
    graph: training.captured, fused: training.optimizer.flatBuffers.length > 0, world_size: worldSize, skipped_steps: training.skipped, final_scale: training.scaler.getScale(),
    peak_memory_bytes: memory?.peak, allocated_memory_bytes: memory?.allocated, reserved_memory_bytes: memory?.reserved,
  }, null, 1));
}
await distributed.destroyProcessGroup();
