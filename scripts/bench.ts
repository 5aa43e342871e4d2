/**
 * The tutorial's benchmark: host time of one forward call and of one backward
 * call (of h'.sum() + c'.sum(), i.e. all-ones output gradients, made once
 * before timing; making the backward's output tensors is timed), synchronising
 * the device after each, over many calls after a warm-up. --json writes the shape ../shared/bench/torch_lltm.py
 * writes, for ../shared/bench/compare.py.
 *
 * With --seq T one call is T steps of the LLTM module (forward), then
 * backpropagation through time of (every step's h summed) + (the last c
 * summed), the case `torch_lltm.py --seq T` times: one native call each way
 * (the sequence engine), or one per step with --per-step (variant
 * `<device>-per-step` in the JSON). It also prints the bytes a training
 * forward keeps for the backward (the reserve), per step.
 *
 * --dtype picks the element type (float32, float64, bfloat16, float16; -d
 * is --dtype float64), --precision how float32 products may round
 * (setFloat32MatmulPrecision: highest, the default, high for TF32, medium).
 *
 * With --contend N, N busy processes of its own (scripts/contention.ts) spin
 * beside the run, from before the warm-up to the end, and are always ended.
 * Every run reports min, median, mean and p99 per call.
 *
 * usage: bun scripts/bench.ts [ref|cpu|cuda] [-b 16] [-f 32] [-s 128] [-r 100] [-w 10]
 *                             [--seq T [--per-step]] [--scale s|ms|us] [-d | --dtype D] [--precision P]
 *                             [--json FILE] [--contend N]
 */
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";

import {
  backendInfo, cuda, type DType, floatDTypes, type FloatDType, LLTMLayer, lltmBackward, lltmSequenceForward, referenceBackwardMatrices, referenceForward,
  referenceForwardMatrices, relativeError, Tensor, toMatrix,
} from "../ts/index.ts";
import { fail, intArg, parseArgs } from "./args.ts";
import { startContention } from "./contention.ts";
import { applyPrecisionArg } from "./precision_arg.ts";
import { forward, type Sizes, workload } from "./workload.ts";

const usage =
  "usage: bun scripts/bench.ts [ref|cpu|cuda] [-b 16] [-f 32] [-s 128] [-r 100] [-w 10] [--seq T [--per-step]] [--scale s|ms|us] [-d | --dtype D] [--precision P] [--json FILE] [--contend N]";
const args = parseArgs(process.argv.slice(2), {
  values: ["-b", "-f", "-s", "-r", "-w", "--seq", "--scale", "--json", "--contend", "--dtype", "--precision"], flags: ["-d", "--per-step"], positionals: true,
}, usage);
const variant = args.positional[0] ?? "cpu";
if (!["ref", "cpu", "cuda"].includes(variant)) fail(`variant must be ref, cpu or cuda, got ${variant}`, usage);
const sizes: Sizes = { batch: intArg(args, "-b", 16, usage), features: intArg(args, "-f", 32, usage), state: intArg(args, "-s", 128, usage) };
const runs = intArg(args, "-r", 100, usage);
const warmup = intArg(args, "-w", 10, usage);
const scale = args.values.get("--scale") ?? "us";
const factors: Record<string, number> = { s: 1e-6, ms: 1e-3, us: 1 };
if (!(scale in factors)) fail(`--scale must be s, ms or us, got ${scale}`, usage);
const dtypeName = args.values.get("--dtype") ?? (args.flags.has("-d") ? "float64" : "float32");
if (!floatDTypes.includes(dtypeName as FloatDType)) fail(`--dtype must be one of ${floatDTypes.join(", ")}, got ${dtypeName}`, usage);
if (args.flags.has("-d") && dtypeName !== "float64") fail("-d is --dtype float64", usage);
const dtype: DType = dtypeName as FloatDType;
const precision = applyPrecisionArg(args, usage);
const device = variant === "cuda" ? "cuda" : "cpu";
const steps = intArg(args, "--seq", 1, usage);
const sequence = args.values.has("--seq");
if (sequence && variant === "ref") fail("--seq times the native module; use cpu or cuda", usage);
const perStep = args.flags.has("--per-step");
if (perStep && !sequence) fail("--per-step goes with --seq T", usage);

interface Stats {
  min: number;
  med: number;
  avg: number;
  p99: number;
}

function stats(xs: number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const med = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  const p99 = s[Math.min(s.length - 1, Math.ceil(0.99 * s.length) - 1)]!;
  return { min: s[0]!, med, avg: xs.reduce((a, b) => a + b, 0) / xs.length, p99 };
}

const contenders = args.values.has("--contend") ? intArg(args, "--contend", 0, usage) : 0;
const contention = startContention(contenders);
if (contenders > 0) await new Promise((r) => setTimeout(r, 200)); // let them start spinning

const sync = device === "cuda" ? () => cuda.synchronize("cuda:0") : () => 0;
const fw: number[] = [], bw: number[] = [];
let maxRelErr = 0;
let reservePerStep = 0;

/** Times forward and backward calls (synchronising after each), keeping the calls after the warm-up. */
function timeCalls<R extends Disposable, G extends Disposable>(forwardCall: () => R, backwardCall: (r: R) => G): void {
  for (let i = 0; i < warmup + runs; i++) {
    const t0 = performance.now();
    const out = forwardCall();
    sync();
    const t1 = performance.now();
    const grads = backwardCall(out);
    sync();
    const t2 = performance.now();
    grads[Symbol.dispose]();
    out[Symbol.dispose]();
    if (i >= warmup) {
      fw.push((t1 - t0) * 1000);
      bw.push((t2 - t1) * 1000);
    }
  }
}

if (variant === "ref") {
  using w = workload(sizes, dtype, "cpu");
  const m = [w.input, w.weights, w.bias, w.oldH, w.oldCell].map(toMatrix) as [ReturnType<typeof toMatrix>, ReturnType<typeof toMatrix>, ReturnType<typeof toMatrix>, ReturnType<typeof toMatrix>, ReturnType<typeof toMatrix>];
  for (let i = 0; i < warmup + runs; i++) {
    const t0 = performance.now();
    const out = referenceForwardMatrices(...m);
    const t1 = performance.now();
    const ones = { rows: sizes.batch, cols: sizes.state, data: new Float64Array(sizes.batch * sizes.state).fill(1) };
    referenceBackwardMatrices(ones, ones, out.newCell, out.inputGate, out.outputGate, out.candidateCell, out.X, out.gateWeights, m[1]);
    const t2 = performance.now();
    if (i >= warmup) {
      fw.push((t1 - t0) * 1000);
      bw.push((t2 - t1) * 1000);
    }
  }
} else if (sequence) {
  const { batch: B, features: F, state: S } = sizes;
  using w = workload(sizes, dtype, device);
  using xs = Tensor.randn([steps, B, F], { dtype, device, seed: 11 });
  using module = new LLTMLayer(F, S, { dtype, device });
  module.weights.copyFrom(w.weights);
  module.bias.copyFrom(w.bias);
  using ones = Tensor.ones([steps, B, S], { dtype, device });
  using zeros = Tensor.zeros([B, S], { dtype, device });
  using lastC = Tensor.ones([B, S], { dtype, device });
  const options = { perStep };
  {
    using seq = module.sequence(xs, [w.oldH, w.oldCell], options);
    if (B * 3 * S * (S + F) * steps <= 2e9) maxRelErr = sequenceError(seq.outputs, xs, w);
    using fw = lltmSequenceForward(xs, module.weights, module.bias, w.oldH, w.oldCell);
    reservePerStep = (fw.reserve!.numel * fw.reserve!.itemSize) / steps;
  }
  timeCalls(
    () => module.sequence(xs, [w.oldH, w.oldCell], options),
    (seq) => seq.backward(ones, [zeros, lastC]),
  );
} else {
  using w = workload(sizes, dtype, device);
  {
    // Accuracy of this run's configuration against the float64 reference, as torch_lltm.py reports it.
    using out = forward(w);
    if (sizes.batch * 3 * sizes.state * (sizes.state + sizes.features) <= 2e9) {
      const ref = referenceForward(w.input, w.weights, w.bias, w.oldH, w.oldCell);
      maxRelErr = Math.max(relativeError(out.newH.toTypedArray(), ref.newH.data), relativeError(out.newCell.toTypedArray(), ref.newCell.data));
    }
  }
  // d(h'.sum() + c'.sum()) / dh' and / dc': constant inputs of every backward call.
  using gradH = Tensor.ones([sizes.batch, sizes.state], { dtype, device });
  using gradCell = Tensor.ones([sizes.batch, sizes.state], { dtype, device });
  timeCalls(
    () => forward(w),
    (out) => lltmBackward(gradH, gradCell, out.newCell, out.inputGate, out.outputGate, out.candidateCell, out.X, out.gateWeights, w.weights),
  );
}

/** Relative error of every step's h against the float64 reference run step by step. */
function sequenceError(outputs: Tensor, xs: Tensor, w: ReturnType<typeof workload>): number {
  const [T, B, F] = xs.shape as [number, number, number];
  const S = sizes.state;
  const x = Float64Array.from(xs.toTypedArray());
  const [W, bias] = [toMatrix(w.weights), toMatrix(w.bias)];
  let h = toMatrix(w.oldH), c = toMatrix(w.oldCell);
  const expected = new Float64Array(T * B * S);
  for (let t = 0; t < T; t++) {
    const out = referenceForwardMatrices({ rows: B, cols: F, data: x.subarray(t * B * F, (t + 1) * B * F) }, W, bias, h, c);
    expected.set(out.newH.data, t * B * S);
    h = out.newH;
    c = out.newCell;
  }
  return relativeError(outputs.toTypedArray(), expected);
}

contention.stop();
const f = stats(fw), b = stats(bw);
const k = factors[scale]!;
const fmt = (x: number) => (x * k).toFixed(3);
console.log(`Forward: ${fmt(f.min)}/${fmt(f.avg)} ${scale} | Backward ${fmt(b.min)}/${fmt(b.avg)} ${scale}`);
console.log(`  (median: forward ${fmt(f.med)} ${scale}, backward ${fmt(b.med)} ${scale}; p99: forward ${fmt(f.p99)} ${scale}, backward ${fmt(b.p99)} ${scale}; ${variant}${perStep ? " per step" : ""} ${dtype}${precision === "highest" ? "" : ` (float32 products: ${precision})`} ${sizes.batch}x${sizes.features}x${sizes.state}${sequence ? ` T=${steps}` : ""}, ${runs} runs${contenders ? `, ${contenders} busy processes beside it` : ""})`);
if (sequence) console.log(`  (a training forward keeps ${reservePerStep} bytes per step for the backward: T*B*5S elements)`);

if (device === "cuda") {
  // What no call can go below on this machine: one tiny kernel launched and waited for, through the same stack.
  using one = Tensor.zeros([1], { device });
  const floor: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    const t0 = performance.now();
    one.fill(1); // not 0: a fill of zeros is a memset, not a kernel
    sync();
    if (i >= warmup) floor.push((performance.now() - t0) * 1000);
  }
  console.log(`  (launch floor: a 1-element fill kernel + synchronize, median ${stats(floor).med.toFixed(3)} us)`);
}

const jsonPath = args.values.get("--json");
if (jsonPath) {
  const info = backendInfo();
  const doc = {
    tool: "lltm",
    device,
    device_name: device === "cuda" ? `cuda (${info.cudaDevices} device${info.cudaDevices === 1 ? "" : "s"})` : cpus()[0]?.model ?? "cpu",
    results: [{
      variant: `${variant}${perStep ? "-per-step" : ""}${precision === "highest" ? "" : `-${precision}`}`, dtype, batch: sizes.batch, features: sizes.features, state: sizes.state, steps, runs,
      forward_us: f, backward_us: b, max_rel_err: maxRelErr, contend: contenders,
    }],
  };
  writeFileSync(jsonPath, JSON.stringify(doc, null, 1));
}
