/**
 * One rank of the distributed tests, started by lltm-run (RANK, WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT set). Modes:
 *   env                          prints its rendezvous variables
 *   collectives <backend> <dev>  (dev: cpu, or cuda for cuda:LOCAL_RANK) every collective in every dtype; prints the results as JSON
 *   ddp <backend> <dev> <steps> <batch> [accumulate] [checkpoint] [fused]
 *                                trains a small model data-parallel; prints the parameters as JSON (fused: a fused
 *                                optimizer, and one bucket, which is then its flat gradient, reduced in place)
 *   fail <rank>                  that rank exits with status 3 after a barrier, the others wait forever
 */
import process from "node:process";

import type { DeviceLike, distributed as Distributed } from "../../ts/index.ts";

const [mode = "env", ...args] = process.argv.slice(2);

function print(value: unknown): void {
  process.stdout.write(`RESULT ${process.env.RANK} ${JSON.stringify(value)}\n`);
}

// The library is loaded only by the modes that use it, so that `env` shows the launcher alone.
if (mode === "env") {
  print({ RANK: process.env.RANK, WORLD_SIZE: process.env.WORLD_SIZE, LOCAL_RANK: process.env.LOCAL_RANK,
    MASTER_ADDR: process.env.MASTER_ADDR, MASTER_PORT: process.env.MASTER_PORT, NCCL_NVLS_ENABLE: process.env.NCCL_NVLS_ENABLE,
    args: args });
  process.exit(0);
}
const { distributed, DistributedDataParallel, dtypes, SGD, Tensor } = await import("../../ts/index.ts");
const { ELEMENTS, rankValues } = await import("./inputs.ts");
const { batchOf, makeModel, stepLoss } = await import("./model.ts");

async function collectives(backend: Distributed.Backend, device: DeviceLike): Promise<void> {
  const group = await distributed.initProcessGroup({ backend });
  const { rank, worldSize } = group;
  const out: Record<string, Record<string, number[]>> = {};
  const make = (dtype: (typeof dtypes)[number], values: number[], shape: number[]) =>
    dtype === "int32"
      ? Tensor.fromTypedArray(Int32Array.from(values), shape).to(device)
      : Tensor.fromTypedArray(Float64Array.from(values), shape, { dtype }).to(device);
  for (const dtype of dtypes) {
    const mine = rankValues(dtype, rank);
    const results: Record<string, number[]> = {};
    using summed = make(dtype, mine, [3, 4]);
    await distributed.allReduce(summed, { op: "sum" });
    results.sum = [...summed.toTypedArray()];
    if (dtype !== "int32") {
      using averaged = make(dtype, mine, [ELEMENTS]);
      await distributed.allReduce(averaged, { op: "mean" });
      results.mean = [...averaged.toTypedArray()];
    }
    using sent = make(dtype, mine, [ELEMENTS]);
    await distributed.broadcast(sent, { src: worldSize - 1 });
    results.broadcast = [...sent.toTypedArray()];
    using gathered = Tensor.zeros([worldSize, ELEMENTS], { dtype, device });
    using input = make(dtype, mine, [ELEMENTS]);
    await distributed.allGather(gathered, input);
    results.allGather = [...gathered.toTypedArray()];
    using scattered = Tensor.zeros([ELEMENTS / worldSize], { dtype, device });
    using whole = make(dtype, mine, [ELEMENTS]);
    await distributed.reduceScatter(scattered, whole, { op: "sum" });
    results.reduceScatter = [...scattered.toTypedArray()];
    out[dtype] = results;
  }
  await distributed.barrier();
  print(out);
  await distributed.destroyProcessGroup();
}

async function ddp(backend: Distributed.Backend, device: DeviceLike, steps: number, batch: number, accumulate: number): Promise<void> {
  const group = await distributed.initProcessGroup({ backend });
  // Each rank starts from other weights: the broadcast from rank 0 must make them equal.
  using model = makeModel(group.rank, device);
  const fused = args[6] === "fused";
  using ddpModel = await DistributedDataParallel.create(model, { bucketCapMB: fused ? 25 : 0.001 });
  using optimizer = new SGD(model.parameters(), { lr: 0.1, momentum: 0.9, fused });
  if (fused && optimizer.flatBuffers.length !== 1) throw new Error(`expected one flat buffer, got ${JSON.stringify(optimizer.flatBuffers)}`);
  for (let step = 0; step < steps; step++) {
    optimizer.zeroGrad();
    const micro = batch / accumulate;
    for (let m = 0; m < accumulate; m++) {
      const start = step * group.worldSize * batch + group.rank * batch + m * micro;
      const run = () => {
        using loss = stepLoss(model, batchOf(start, micro, device));
        // Each micro-batch's mean, scaled so that the accumulated gradient is the batch's mean.
        using seed = Tensor.full([1], 1 / accumulate, { device });
        loss.backward(seed);
      };
      if (m < accumulate - 1) ddpModel.noSync(run);
      else run();
    }
    await ddpModel.syncGradients();
    optimizer.step();
  }
  if (args[5] !== undefined) await ddpModel.save(args[5]);
  const params = Object.fromEntries(model.namedParameters().map(([n, t]) => [n, [...t.toTypedArray()]]));
  print(params);
  await distributed.destroyProcessGroup();
}

async function fail(failing: number): Promise<void> {
  const group = await distributed.initProcessGroup({ backend: "cpu" });
  await group.barrier();
  if (group.rank === failing) {
    process.stderr.write(`rank ${group.rank} failing on purpose\n`);
    process.exit(3);
  }
  print("waiting");
  // Stays busy with nothing, as a rank stuck in a collective would.
  setInterval(() => {}, 1000);
  await new Promise(() => {});
}

/** "cuda" is this rank's GPU, cuda:LOCAL_RANK. */
function deviceArg(arg: string | undefined): DeviceLike {
  return arg === "cuda" ? `cuda:${Number(process.env.LOCAL_RANK ?? 0)}` : ((arg ?? "cpu") as DeviceLike);
}

switch (mode) {
  case "collectives":
    await collectives(args[0] as Distributed.Backend, deviceArg(args[1]));
    break;
  case "ddp":
    await ddp(args[0] as Distributed.Backend, deviceArg(args[1]), Number(args[2]), Number(args[3]), Number(args[4] ?? 1));
    break;
  case "fail":
    await fail(Number(args[0]));
    break;
  default:
    throw new Error(`unknown mode ${mode}`);
}
