/**
 * Where a CPU training step of the main job goes: charlm.ts's model and
 * recipe (eager, its CPU configuration by default), timed in three parts per
 * step: the forward with the loss, the backward, and the update (clipping
 * and AdamW); the median of each over the steps. Batches are fixed windows
 * of the training text, so that runs of two builds see the same data.
 *
 * usage: bun scripts/charlm_parts.ts [--steps 30] [--seq 64] [-b 32] [-s 128] [-e 32] [--layers 2]
 */
import { clipGradNorm_ } from "../ts/index.ts";
import { intArg, parseArgs } from "./args.ts";
import { CharLM } from "./charlm_model.ts";
import { batchAt, loadCorpus, recipe, trainer } from "./charlm_train.ts";

const usage = "usage: bun scripts/charlm_parts.ts [--steps 30] [--seq 64] [-b 32] [-s 128] [-e 32] [--layers 2]";
const args = parseArgs(process.argv.slice(2), { values: ["--steps", "--seq", "-b", "-s", "-e", "--layers"] }, usage);
const steps = intArg(args, "--steps", 30, usage), T = intArg(args, "--seq", 64, usage), B = intArg(args, "-b", 32, usage);
const S = intArg(args, "-s", 128, usage), E = intArg(args, "-e", 32, usage), layers = intArg(args, "--layers", 2, usage);
const device = "cpu";

const { vocabulary, train } = loadCorpus();
using model = new CharLM({ vocabulary, embedding: E, stateSize: S, layers, dropout: 0 }, { device, seed: 0 });
using training = trainer(model, 0.003, steps, { device, graph: false });
const parts = { forward: [] as number[], backward: [] as number[], update: [] as number[] };
const stride = Math.floor((train.length - T - 1) / B);
for (let i = 0; i < steps; i++) {
  const { x, y } = batchAt(train, Array.from({ length: B }, (_, b) => b * stride + 7 * i), T, device);
  const t0 = performance.now();
  using loss = model.loss(x, y);
  const t1 = performance.now();
  loss.backward();
  const t2 = performance.now();
  clipGradNorm_(model.parameters(), recipe.clipNorm).dispose();
  training.optimizer.step();
  training.optimizer.zeroGrad();
  const t3 = performance.now();
  parts.forward.push(t1 - t0);
  parts.backward.push(t2 - t1);
  parts.update.push(t3 - t2);
  x.dispose();
  y.dispose();
}
const median = (a: number[]) => [...a].sort((p, q) => p - q)[a.length >> 1]!;
console.log(
  `${layers}×LLTM ${S}, T=${T}, B=${B}, embedding ${E}, ${steps} steps on the CPU, median ms: ` +
    Object.entries(parts).map(([k, v]) => `${k} ${median(v).toFixed(2)}`).join(", "),
);
