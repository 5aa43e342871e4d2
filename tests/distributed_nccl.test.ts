/**
 * The NCCL process group on GPUs: a group of one on cuda:0 (every
 * collective in every dtype, refusals, DDP through lltm-run), and with two
 * GPUs two ranks, by NCCL's own transports and by its socket transport
 * alone (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo), as two
 * machines would talk. Skipped, saying why, without a GPU or NCCL.
 */
import { backendInfo, distributed, dtypes, LLTMError, Tensor } from "../ts/index.ts";
import { assertSameParameters, expectedCollectives, trainCombined } from "./distributed/expected.ts";
import { ELEMENTS, rankValues, rounded } from "./distributed/inputs.ts";
import { launch } from "./distributed/launch.ts";
import { assert, assertEquals, test } from "./harness.ts";
import { unitRoundoff } from "./helpers.ts";

/** Why NCCL tests needing `gpus` GPUs cannot run here, or false. */
function ncclSkipReason(gpus: number): string | false {
  const info = backendInfo();
  if (!info.cuda) return "NCCL tests: no CUDA backend or no GPU on this machine";
  if (info.cudaDevices < gpus) return `NCCL tests of ${gpus} ranks: this machine has ${info.cudaDevices} GPU${info.cudaDevices === 1 ? "" : "s"}`;
  return ncclMissing;
}

function groupOfOne(): Promise<distributed.ProcessGroup> {
  return distributed.initProcessGroup({ backend: "nccl", rank: 0, worldSize: 1, device: "cuda:0" });
}

/** NCCL's absence, found once by a group of one (the library opens NCCL on first use). */
const ncclMissing: string | false = await (async () => {
  if (!backendInfo().cuda) return false;
  try {
    await groupOfOne();
    await distributed.destroyProcessGroup();
    return false;
  } catch (e) {
    if (e instanceof LLTMError && e.code === "BACKEND_UNAVAILABLE") return `NCCL tests: ${e.message}`;
    throw e;
  }
})();

/** Collective results within a few units of roundoff of the host's (NCCL sums in its own order and precision). */
function assertClose(got: Record<string, number[]>, want: Record<string, number[]>, dtype: (typeof dtypes)[number], what: string): void {
  assertEquals(Object.keys(got), Object.keys(want), what);
  for (const key of Object.keys(want)) {
    const g = got[key]!, w = want[key]!;
    assertEquals(g.length, w.length, `${what} ${key}`);
    const scale = Math.max(...w.map(Math.abs), 1);
    for (let i = 0; i < w.length; i++) {
      assert(Math.abs(g[i]! - w[i]!) <= 4 * unitRoundoff[dtype] * scale, `${what} ${key}[${i}]: ${g[i]} vs ${w[i]}`);
    }
  }
}

test("NCCL group of one on cuda:0: every collective in every dtype, on the device's stream", async () => {
  const group = await groupOfOne();
  try {
    assertEquals([group.backend, group.rank, group.worldSize], ["nccl", 0, 1]);
    await everyCollective();
  } finally {
    await distributed.destroyProcessGroup();
  }
}, { skip: ncclSkipReason(1) });

async function everyCollective(): Promise<void> {
  for (const dtype of dtypes) {
    const values = rankValues(dtype, 0);
    using host = dtype === "int32" ? Tensor.fromTypedArray(Int32Array.from(values)) : Tensor.fromTypedArray(Float64Array.from(values), [ELEMENTS], { dtype });
    using t = host.to("cuda:0");
    await distributed.allReduce(t, { op: "sum" });
    if (dtype !== "int32") await distributed.allReduce(t, { op: "mean" });
    await distributed.broadcast(t, { src: 0 });
    using gathered = Tensor.zeros([1, ELEMENTS], { dtype, device: "cuda:0" });
    await distributed.allGather(gathered, t);
    using scattered = Tensor.zeros([ELEMENTS], { dtype, device: "cuda:0" });
    await distributed.reduceScatter(scattered, gathered, { op: "sum" });
    assertEquals([...scattered.toTypedArray()], rounded(values, dtype), dtype);
  }
  await distributed.barrier();
}

test("NCCL group: a host tensor and a mean of int32 are refused by name", async () => {
  await groupOfOne();
  try {
    using host = Tensor.zeros([4]);
    using ids = Tensor.zeros([4], { dtype: "int32", device: "cuda:0" });
    const refusals: [() => Promise<void>, RegExp][] = [
      [() => distributed.allReduce(host), /allReduce: 'tensor' is on cpu, the group's GPU is cuda:0/],
      [() => distributed.allReduce(ids, { op: "mean" }), /allReduce: 'op' "mean" needs a float tensor, got int32/],
    ];
    for (const [fn, pattern] of refusals) {
      const message = await fn().then(() => "resolved", (e: Error) => e.message);
      assert(pattern.test(message), message);
    }
  } finally {
    await distributed.destroyProcessGroup();
  }
}, { skip: ncclSkipReason(1) });

test("NCCL through lltm-run on one GPU: DDP of one rank equals plain training", async () => {
  const r = await launch(["--nproc-per-node", "1"], ["ddp", "nccl", "cuda", "3", "8", "1"]);
  assertEquals(r.code, 0, r.stderr);
  assertSameParameters(r.results.get(0) as Record<string, number[]>, trainCombined(3, 1, 8, "cuda:0"), "rank 0");
}, { skip: ncclSkipReason(1) });

const socketTransport = { NCCL_P2P_DISABLE: "1", NCCL_SHM_DISABLE: "1", NCCL_SOCKET_IFNAME: "lo" };

for (const [transport, env] of [["NCCL's transports", {}], ["the socket transport alone", socketTransport]] as const) {
  test(`2 ranks on 2 GPUs by ${transport}: every collective in every dtype equals the host's`, async () => {
    const r = await launch(["--nproc-per-node", "2"], ["collectives", "nccl", "cuda"], { env });
    assertEquals(r.code, 0, r.stderr);
    for (const rank of [0, 1]) {
      const got = r.results.get(rank) as Record<string, Record<string, number[]>>;
      for (const dtype of dtypes) assertClose(got[dtype]!, expectedCollectives(dtype, rank, 2), dtype, `rank ${rank}, ${dtype}`);
    }
  }, { skip: ncclSkipReason(2) });

  test(`2 ranks on 2 GPUs by ${transport}: DDP of batch 4 each equals one GPU on batch 8`, async () => {
    const r = await launch(["--nproc-per-node", "2"], ["ddp", "nccl", "cuda", "3", "4", "1"], { env });
    assertEquals(r.code, 0, r.stderr);
    const want = trainCombined(3, 2, 4, "cuda:0");
    for (const rank of [0, 1]) assertSameParameters(r.results.get(rank) as Record<string, number[]>, want, `rank ${rank}`);
  }, { skip: ncclSkipReason(2) });
}
