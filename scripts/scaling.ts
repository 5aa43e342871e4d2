/**
 * Data-parallel scaling of the main job, lltm beside PyTorch's DDP, in one
 * command: for each process count N it runs
 *
 * - lltm: `lltm-run --nproc-per-node N scripts/charlm.ts` (a fixed step count, --json),
 * - PyTorch's LLTM and nn.LSTM character models under torchrun
 *   (`python3 -m torch.distributed.run --standalone --nproc_per_node N scripts/torch_charlm_ddp.py --model lltm|lstm`),
 *
 * all at the same sizes with B per rank (the global batch N·B), one after the
 * other, then prints one table: tokens/s (every rank's tokens over the wall
 * time) for each N, the speed-up over N=1 of each, and lltm's tokens/s ÷
 * each PyTorch model's. NVLink multicast stays off (NCCL_NVLS_ENABLE=0) in
 * every process it starts.
 *
 * lltm's DDP step runs eagerly (a captured step cannot wait for the other
 * ranks' gradients), so every N runs it with --no-graph, like for like; on
 * CUDA one more run, N=1 with its step captured, gives what one GPU reaches
 * without DDP, and the largest N's lltm rate is also set against it.
 *
 * Each side's steady rate is compared: lltm's is charlm.ts's
 * steady_tokens_per_second (steps 2 to the last, its validations left out),
 * PyTorch's leaves out its --warmup steps (and, on CUDA, the capture of its
 * CUDA graph); the table says which ran captured.
 *
 * usage: bun scripts/scaling.ts [--device cuda|cpu] [--nprocs 1,G] [--steps N] [--warmup 20] [--seq T] [-b B] [-s S]
 *                               [-e E] [--layers 2] [--models lltm,torch-lltm,torch-lstm] [--python python3]
 *                               [--torch-threads N] [--torchrun-args ARGS] [--out out/scaling] [--json FILE]
 *
 * On CUDA the defaults are the main job's GPU configuration (2×512, T=100, B=64, 500 steps) and N in 1 and
 * the GPU count; on the CPU a small one (2×128, T=64, B=32, 20 steps), N in 1 and 2, the CPU group and gloo.
 * The embedding is each model's own unless -e is given (lltm's 64 on CUDA, 32 on the CPU; nn.LSTM's 128).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

import { fail, intArg, parseArgs } from "./args.ts";

const usage = "usage: bun scripts/scaling.ts [--device cuda|cpu] [--nprocs 1,G] [--steps N] [--warmup 20] [--seq T] [-b B] [-s S] " +
  "[-e E] [--layers 2] [--models lltm,torch-lltm,torch-lstm] [--python python3] [--torch-threads N] [--torchrun-args ARGS] [--out out/scaling] [--json FILE]";
const args = parseArgs(process.argv.slice(2), {
  values: [
    "--device", "--nprocs", "--steps", "--warmup", "--seq", "-b", "-s", "-e", "--layers", "--models", "--python", "--torch-threads",
    "--torchrun-args", "--out",
    "--json",
  ],
}, usage);

const root = fileURLToPath(new URL("..", import.meta.url));

/** The GPUs nvidia-smi lists (0 where it is absent). */
function gpuCount(): number {
  const r = spawnSync("nvidia-smi", ["-L"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.split("\n").filter((l) => l.startsWith("GPU ")).length : 0;
}

const gpus = gpuCount();
const device = args.values.get("--device") ?? (gpus > 0 ? "cuda" : "cpu");
if (device !== "cuda" && device !== "cpu") fail(`--device must be cuda or cpu, got ${device}`, usage);
const gpu = device === "cuda";
if (gpu && gpus === 0) fail("--device cuda: nvidia-smi lists no GPU", usage);

const nprocs = (args.values.get("--nprocs") ?? [...new Set([1, gpu ? gpus : 2])].join(",")).split(",").map((v) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) fail(`--nprocs must be positive integers separated by commas, got ${args.values.get("--nprocs")}`, usage);
  if (gpu && n > gpus) fail(`--nprocs ${n}: this machine has ${gpus} GPU${gpus === 1 ? "" : "s"}`, usage);
  return n;
});
const modelNames = ["lltm", "torch-lltm", "torch-lstm"] as const;
type ModelName = (typeof modelNames)[number];
const models = (args.values.get("--models") ?? modelNames.join(",")).split(",").map((m) => {
  if (!(modelNames as readonly string[]).includes(m)) fail(`--models takes ${modelNames.join(", ")}; got ${m}`, usage);
  return m as ModelName;
});
const steps = intArg(args, "--steps", gpu ? 500 : 20, usage);
const warmup = args.values.has("--warmup") ? Number(args.values.get("--warmup")) : 20;
if (!Number.isInteger(warmup) || warmup < 0) fail(`--warmup must be 0 or more, got ${args.values.get("--warmup")}`, usage);
// charlm.ts's defaults for the device, given to every model so that they all run the same sizes.
const T = intArg(args, "--seq", gpu ? 100 : 64, usage);
const B = intArg(args, "-b", gpu ? 64 : 32, usage);
const S = intArg(args, "-s", gpu ? 512 : 128, usage);
const layers = intArg(args, "--layers", 2, usage);
const embedding = args.values.has("-e") ? intArg(args, "-e", 1, usage) : undefined;
// charlm.ts's embedding for the device, which PyTorch's LLTM takes too; nn.LSTM keeps its own unless -e is given.
const lltmEmbedding = embedding ?? (gpu ? 64 : 32);
const python = args.values.get("--python") ?? "python3";
// PyTorch's CPU threads per rank: by default torch_charlm_ddp.py splits the CPUs between the ranks, as lltm-run does.
const torchThreads = args.values.has("--torch-threads") ? ["--threads", String(intArg(args, "--torch-threads", 1, usage))] : [];
const torchrunArgs = (args.values.get("--torchrun-args") ?? "").split(/\s+/).filter((a) => a !== "");
// Absolute: the runs start in the checkout's root, wherever this one was started.
const outDir = resolve(args.values.get("--out") ?? join(root, "out", "scaling"));

// Every process started here, and every one those start, keeps NVLink multicast off.
const env = { ...process.env, NCCL_NVLS_ENABLE: "0" };
const sizes = ["--seq", String(T), "-b", String(B), "-s", String(S), "--layers", String(layers)];

/** lltm's main job on n processes; `captured` leaves out --no-graph (a single process only: DDP's step is eager). */
function lltmCommand(n: number, json: string, captured: boolean): string[] {
  return [
    process.execPath, join(root, "ts/bin/lltm_run.ts"), "--nproc-per-node", String(n), join(root, "scripts/charlm.ts"),
    "--device", device, "--steps", String(steps), ...sizes, "-e", String(lltmEmbedding), ...(captured ? [] : ["--no-graph"]),
    // No time budget: every run does all its steps.
    "--max-seconds", String(7 * 24 * 3600), "--out", join(outDir, `lltm-${n}${captured ? "-graph" : ""}`), "--json", json,
  ];
}

/** The command that runs `model` on n processes, writing its JSON to `json`. */
function command(model: ModelName, n: number, json: string): string[] {
  if (model === "lltm") return lltmCommand(n, json, false);
  return [
    python, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", String(n), ...torchrunArgs,
    join(root, "scripts/torch_charlm_ddp.py"), "--model", model === "torch-lltm" ? "lltm" : "lstm", "--device", device,
    "--steps", String(steps), "--warmup", String(warmup), ...sizes, ...torchThreads,
    ...(model === "torch-lltm" ? ["-e", String(lltmEmbedding)] : embedding === undefined ? [] : ["-e", String(embedding)]), "--json", json,
  ];
}

/** What one run wrote (the keys scripts/charlm.ts --json and torch_charlm_ddp.py share). */
interface RunResult {
  tokens_per_second: number;
  /** charlm.ts's rate without its first step and its validations. */
  steady_tokens_per_second?: number;
  steps: number;
  graph: boolean;
  world_size: number;
}

type Outcome = { ok: true; result: RunResult } | { ok: false; why: string };

/** Runs argv (its output shown as it comes) and reads the JSON it writes. */
function runOne(title: string, argv: string[], json: string): Outcome {
  rmSync(json, { force: true });
  console.log(`\n== ${title}: ${argv.join(" ")}`);
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd: root, env, stdio: "inherit" });
  const why = r.error ? r.error.message : r.status !== 0 ? `exit ${r.status ?? r.signal}` : !existsSync(json) ? `wrote no ${json}` : undefined;
  return why === undefined ? { ok: true, result: JSON.parse(readFileSync(json, "utf8")) as RunResult } : { ok: false, why };
}

mkdirSync(outDir, { recursive: true });
const outcomes = new Map<string, Outcome>();
const key = (model: ModelName, n: number) => `${model}/${n}`;
for (const n of nprocs) {
  for (const model of models) {
    const json = join(outDir, `${model}-${n}.json`);
    outcomes.set(key(model, n), runOne(`${model}, ${n} process${n === 1 ? "" : "es"}`, command(model, n, json), json));
  }
}
const capturedJson = join(outDir, "lltm-1-graph.json");
const captured = gpu && models.includes("lltm")
  ? runOne("lltm, 1 process, its step captured (no DDP)", lltmCommand(1, capturedJson, true), capturedJson)
  : undefined;

const labels: Record<ModelName, string> = { "lltm": "lltm", "torch-lltm": "PyTorch LLTM", "torch-lstm": "PyTorch nn.LSTM" };
const kTokens = (v: number) => `${(v / 1e3).toFixed(1)} k`;
/** The run's steady tokens/s, undefined where it failed. */
const rate = (model: ModelName, n: number) => {
  const o = outcomes.get(key(model, n));
  return o?.ok ? o.result.steady_tokens_per_second ?? o.result.tokens_per_second : undefined;
};
const base = nprocs[0]!;
const header = ["N", ...models.map((m) => `${labels[m]} tokens/s (×N=${base})`), ...models.filter((m) => m !== "lltm" && models.includes("lltm"))
  .map((m) => `lltm ÷ ${labels[m]}`)];
const rows = nprocs.map((n) => [
  String(n),
  ...models.map((m) => {
    const o = outcomes.get(key(m, n))!, r = rate(m, n), b = rate(m, base);
    if (!o.ok || r === undefined) return `failed (${(o as { why: string }).why})`;
    return `${kTokens(r)} (${b === undefined ? "?" : (r / b).toFixed(2)}×)${o.result.graph ? " graph" : " eager"}`;
  }),
  ...models.filter((m) => m !== "lltm" && models.includes("lltm")).map((m) => {
    const l = rate("lltm", n), t = rate(m, n);
    return l !== undefined && t !== undefined ? `${(l / t).toFixed(2)}×` : "—";
  }),
]);
const embeddingText = embedding === undefined ? `embedding ${lltmEmbedding} (nn.LSTM's 128)` : `embedding ${embedding}`;
console.log(`\nscaling on ${device}${gpu ? ` (${gpus} GPUs)` : ""}: ${layers}×${S}, T=${T}, B=${B} per process, ${embeddingText}, ${steps} steps`);
console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
for (const row of rows) console.log(`| ${row.join(" | ")} |`);
const steadyRate = (o: Outcome | undefined) => o?.ok ? o.result.steady_tokens_per_second ?? o.result.tokens_per_second : undefined;
const capturedRate = steadyRate(captured), top = nprocs.at(-1)!, topRate = rate("lltm", top);
if (captured !== undefined) {
  console.log(capturedRate === undefined
    ? `lltm, 1 process with its step captured: failed (${(captured as { why: string }).why})`
    : `lltm, 1 process with its step captured (no DDP): ${kTokens(capturedRate)} tokens/s` +
      (topRate === undefined ? "" : `; lltm on ${top} processes (DDP, eager) is ${(topRate / capturedRate).toFixed(2)}× it`));
}

const jsonPath = args.values.get("--json");
if (jsonPath) {
  writeFileSync(jsonPath, JSON.stringify({
    tool: "lltm-scaling", device, gpus, layers, state: S, seq: T, batch: B, embedding: embedding ?? null, steps, warmup,
    lltm_captured_1: captured === undefined ? null : captured.ok ? { tokens_per_second: capturedRate, result: captured.result } : { failed: captured.why },
    runs: [...outcomes].map(([k, o]) => {
      const [model, n] = k.split("/");
      return {
        model, nproc: Number(n),
        ...(o.ok ? { tokens_per_second: rate(model as ModelName, Number(n)), graph: o.result.graph, result: o.result } : { failed: o.why }),
      };
    }),
  }, null, 1));
}
process.exit([...outcomes.values(), ...(captured ? [captured] : [])].every((o) => o.ok) ? 0 : 1);
