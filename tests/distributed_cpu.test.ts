/**
 * The CPU process group and data parallelism without GPUs: every collective
 * in every dtype over 3 processes against the host computation, groups of
 * one in this process, DistributedDataParallel on 2 ranks against one
 * process trained on the combined batch (with and without gradient
 * accumulation under noSync), checkpoints by rank 0, DistributedSampler, and
 * the refusals.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

import { distributed, DistributedSampler, dtypes, LLTMError, Tensor } from "../ts/index.ts";
import { CPUGroup } from "../ts/distributed/cpu_group.ts";
import { assertSameParameters, expectedCollectives, trainCombined } from "./distributed/expected.ts";
import { ELEMENTS, rankValues, rounded } from "./distributed/inputs.ts";
import { launch } from "./distributed/launch.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";
import { tempDir } from "./temp_dir.ts";

const dir = tempDir("lltm-ddp-");

test("CPU group of 3 processes: allReduce (sum, mean), broadcast, allGather, reduceScatter in every dtype equal the host's", async () => {
  const r = await launch(["--nproc-per-node", "3"], ["collectives", "cpu", "cpu"]);
  assertEquals(r.code, 0, r.stderr);
  for (let rank = 0; rank < 3; rank++) {
    const got = r.results.get(rank) as Record<string, Record<string, number[]>>;
    for (const dtype of dtypes) assertEquals(got[dtype], expectedCollectives(dtype, rank, 3), `rank ${rank}, ${dtype}`);
  }
});

test("a group of one: every collective is the identity (allGather and reduceScatter copy)", async () => {
  const group = new CPUGroup(0, 1, undefined);
  for (const dtype of dtypes) {
    const values = rankValues(dtype, 0);
    using t = dtype === "int32" ? Tensor.fromTypedArray(Int32Array.from(values)) : Tensor.fromTypedArray(Float64Array.from(values), [ELEMENTS], { dtype });
    await group.allReduce(t, { op: "sum" });
    if (dtype !== "int32") await group.allReduce(t, { op: "mean" });
    await group.broadcast(t);
    using gathered = Tensor.zeros([1, ELEMENTS], { dtype });
    await group.allGather(gathered, t);
    using scattered = Tensor.zeros([ELEMENTS], { dtype });
    await group.reduceScatter(scattered, gathered);
    assertEquals([...scattered.toTypedArray()], rounded(values, dtype), dtype);
  }
  await group.barrier();
  await group.destroy();
});

test("initProcessGroup with nothing set is rank 0 of 1; the default group's functions use it", async () => {
  const group = await distributed.initProcessGroup({ backend: "cpu", rank: 0, worldSize: 1 });
  try {
    assertEquals([distributed.getRank(), distributed.getWorldSize(), distributed.isInitialized()], [0, 1, true]);
    using t = Tensor.fromArray([1, 2, 3]);
    await distributed.allReduce(t, { op: "mean" });
    assertEquals([...t.toTypedArray()], [1, 2, 3]);
    await assertRejects(() => distributed.initProcessGroup({ backend: "cpu" }), "INVALID_ARGUMENT", /already initialised/);
    assert(group.worldSize === 1);
  } finally {
    await distributed.destroyProcessGroup();
  }
  assertEquals(distributed.isInitialized(), false);
  assertThrowsLLTM(() => distributed.getRank(), "INVALID_ARGUMENT", /getRank: no process group: call initProcessGroup first/);
});

async function assertRejects(fn: () => Promise<unknown>, code: LLTMError["code"], pattern: RegExp): Promise<void> {
  try {
    await fn();
  } catch (e) {
    assert(e instanceof LLTMError && e.code === code && pattern.test(e.message), `got ${e}`);
    return;
  }
  throw new Error(`expected ${code} matching ${pattern}`);
}

test("collectives refuse bad input by argument name before anything is sent", async () => {
  const group = new CPUGroup(0, 2 - 1, undefined);
  using t = Tensor.zeros([4, 3]);
  using ids = Tensor.fromTypedArray(Int32Array.of(1, 2));
  using view = t.transpose(0, 1);
  using small = Tensor.zeros([5]);
  using f64 = Tensor.zeros([12], { dtype: "float64" });
  await assertRejects(() => group.allReduce(view), "INVALID_SHAPE", /allReduce: 'tensor' must be contiguous/);
  await assertRejects(() => group.allReduce(t, { op: "max" as never }), "INVALID_ARGUMENT", /allReduce: 'op' must be "sum" or "mean", got "max"/);
  await assertRejects(() => group.allReduce(ids, { op: "mean" }), "INVALID_DTYPE", /allReduce: 'op' "mean" needs a float tensor, got int32/);
  await assertRejects(() => group.broadcast(t, { src: 1 }), "INVALID_ARGUMENT", /broadcast: 'src' must be a rank in \[0, 1\), got 1/);
  await assertRejects(() => group.allGather(small, t), "SHAPE_MISMATCH", /allGather: 'output' must hold worldSize \(1\) × 12 = 12 elements \('input' has 12\), it has 5/);
  await assertRejects(() => group.reduceScatter(t, f64), "INVALID_DTYPE", /reduceScatter: 'input' is float64, 'output' float32/);
  t.dispose();
  await assertRejects(() => group.allReduce(t), "DISPOSED", /allReduce: 'tensor'/);
  await group.destroy();
  await assertRejects(() => group.barrier(), "INVALID_ARGUMENT", /barrier: the process group has been destroyed/);
});

for (const [accumulate, fused] of [[1, false], [2, false], [2, true]] as const) {
  const name = accumulate === 1
    ? "DistributedDataParallel: 3 steps on 2 ranks of batch 4 equal one process on batch 8; rank 0 writes the checkpoint"
    : "DistributedDataParallel with noSync: 2 micro-batches of 2 accumulated per step equal one process on batch 8" +
      (fused ? " (a fused optimizer's flat gradient reduced in place)" : "");
  test(name, async () => {
    const checkpoint = join(dir, `model-${accumulate}${fused ? "-fused" : ""}.safetensors`);
    const r = await launch(["--nproc-per-node", "2"], ["ddp", "cpu", "cpu", "3", "4", String(accumulate), checkpoint, ...(fused ? ["fused"] : [])]);
    assertEquals(r.code, 0, r.stderr);
    const want = trainCombined(3, 2, 4, "cpu");
    for (const rank of [0, 1]) assertSameParameters(r.results.get(rank) as Record<string, number[]>, want, `rank ${rank}`);
    assert(existsSync(checkpoint), "rank 0 wrote the checkpoint");
  });
}

test("DistributedSampler: disjoint shares covering the data set, the same shuffle on every rank, padding or dropLast", () => {
  const shares = [0, 1, 2].map((rank) => new DistributedSampler(10, { rank, worldSize: 3, seed: 7 }));
  const all = shares.flatMap((s) => s.indices());
  assertEquals(shares.map((s) => s.length), [4, 4, 4]);
  assertEquals([...new Set(all)].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assertEquals(all.length, 12);
  const epoch0 = shares[0]!.indices();
  shares[0]!.setEpoch(1);
  assert(JSON.stringify(shares[0]!.indices()) !== JSON.stringify(epoch0), "a new epoch shuffles anew");
  const dropped = [0, 1, 2].map((rank) => new DistributedSampler(10, { rank, worldSize: 3, shuffle: false, dropLast: true }).indices());
  assertEquals(dropped, [[0, 3, 6], [1, 4, 7], [2, 5, 8]]);
  assertThrowsLLTM(() => new DistributedSampler(10, { rank: 3, worldSize: 3 }), "INVALID_ARGUMENT", /DistributedSampler: 'rank' must be in \[0, 3\), got 3/);
});
