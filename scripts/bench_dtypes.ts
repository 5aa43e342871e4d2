/**
 * The step's speed in two dtypes measured in one run, their calls
 * interleaved (a forward and backward in one, then in the other, each
 * synchronised), so that a machine whose load changes during the run slows
 * both alike: the ratio of their medians is what the issue's CPU target
 * ("bfloat16 at 256x512x1024 at least 1.6x lltm's own float32") compares.
 *
 * With --seq T a call is a whole sequence of T steps instead (the sequence
 * engine: a training lltmSequenceForward, then lltmSequenceBackward of
 * gradients of ones on every output), inputs [T, B, F].
 *
 * usage: bun scripts/bench_dtypes.ts [cpu|cuda] [-b 256] [-f 512] [-s 1024] [-r 20] [-w 3] [--dtypes float32,bfloat16] [--seq T]
 */
import { backendInfo, cuda, type DType, dtypes, lltmBackward, lltmSequenceBackward, lltmSequenceForward, Tensor } from "../ts/index.ts";
import { fail, intArg, parseArgs } from "./args.ts";
import { forward, type Sizes, workload } from "./workload.ts";

const usage = "usage: bun scripts/bench_dtypes.ts [cpu|cuda] [-b 256] [-f 512] [-s 1024] [-r 20] [-w 3] [--dtypes float32,bfloat16] [--seq T]";
const args = parseArgs(process.argv.slice(2), { values: ["-b", "-f", "-s", "-r", "-w", "--dtypes", "--seq"], positionals: true }, usage);
const device = args.positional[0] ?? "cpu";
if (device !== "cpu" && device !== "cuda") fail(`device must be cpu or cuda, got ${device}`, usage);
const sizes: Sizes = { batch: intArg(args, "-b", 256, usage), features: intArg(args, "-f", 512, usage), state: intArg(args, "-s", 1024, usage) };
const runs = intArg(args, "-r", 20, usage), warmup = intArg(args, "-w", 3, usage);
const steps = args.values.has("--seq") ? intArg(args, "--seq", 1, usage) : 0;
const chosen = (args.values.get("--dtypes") ?? "float32,bfloat16").split(",") as DType[];
for (const d of chosen) if (!dtypes.includes(d) || d === "int32") fail(`--dtypes takes float types, got ${d}`, usage);

const sync = device === "cuda" ? () => cuda.synchronize("cuda:0") : () => 0;
const loads = chosen.map((dtype) => ({
  dtype,
  w: workload(sizes, dtype, device),
  gradH: Tensor.ones([sizes.batch, sizes.state], { dtype, device }),
  gradCell: Tensor.ones([sizes.batch, sizes.state], { dtype, device }),
  inputs: steps > 0 ? Tensor.randn([steps, sizes.batch, sizes.features], { dtype, device, seed: 1 }) : undefined,
  gradOutputs: steps > 0 ? Tensor.ones([steps, sizes.batch, sizes.state], { dtype, device }) : undefined,
  fw: [] as number[],
  bw: [] as number[],
}));

/** One forward and backward of load `l`: their times in ms. */
function timeStep(l: (typeof loads)[number]): [number, number] {
  const t0 = performance.now();
  using out = forward(l.w);
  sync();
  const t1 = performance.now();
  using g = lltmBackward(l.gradH, l.gradCell, out.newCell, out.inputGate, out.outputGate, out.candidateCell, out.X, out.gateWeights, l.w.weights);
  sync();
  return [t1 - t0, performance.now() - t1];
}

function timeSequence(l: (typeof loads)[number]): [number, number] {
  const t0 = performance.now();
  using out = lltmSequenceForward(l.inputs!, l.w.weights, l.w.bias, l.w.oldH, l.w.oldCell);
  sync();
  const t1 = performance.now();
  using g = lltmSequenceBackward(l.gradOutputs, undefined, undefined, out.reserve!, l.inputs!, l.w.weights, l.w.oldH);
  sync();
  return [t1 - t0, performance.now() - t1];
}

for (let i = 0; i < warmup + runs; i++) {
  for (const l of loads) {
    const [f, b] = steps > 0 ? timeSequence(l) : timeStep(l);
    if (i >= warmup) {
      l.fw.push(f);
      l.bw.push(b);
    }
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const base = loads[0]!;
const info = backendInfo();
console.log(`${device} (${info.cpuKernels} kernels, ${info.threads} threads) ${sizes.batch}x${sizes.features}x${sizes.state}${steps > 0 ? ` T=${steps} (sequence engine)` : ""}, ${runs} runs interleaved, medians:`);
for (const l of loads) {
  const f = median(l.fw), b = median(l.bw);
  const speedup = (median(base.fw) + median(base.bw)) / (f + b);
  console.log(
    `  ${l.dtype.padEnd(8)} forward ${f.toFixed(3)} ms  backward ${b.toFixed(3)} ms  ` +
      `(${(median(base.fw) / f).toFixed(2)}x / ${(median(base.bw) / b).toFixed(2)}x, forward+backward ${speedup.toFixed(2)}x of ${base.dtype})`,
  );
  l.w[Symbol.dispose]();
  l.gradH.dispose();
  l.gradCell.dispose();
  l.inputs?.dispose();
  l.gradOutputs?.dispose();
}
