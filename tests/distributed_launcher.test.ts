/**
 * lltm-run: the rendezvous variables of every rank, a failing rank ending the
 * job within seconds with a message naming it, signals passed to the ranks,
 * and the command line's refusals.
 */
import process from "node:process";

import { parseLaunchArgs } from "../ts/distributed/launcher.ts";
import { launch } from "./distributed/launch.ts";
import { assert, assertEquals, test } from "./harness.ts";

test("lltm-run starts one process per slot with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT and NVLS off", async () => {
  const r = await launch(["--nproc-per-node", "3"], ["env", "x", "--flag"]);
  assertEquals(r.code, 0, r.stderr);
  assertEquals([...r.results.keys()].sort(), [0, 1, 2]);
  const ports = new Set<string>();
  for (const [rank, value] of r.results) {
    const v = value as Record<string, unknown>;
    assertEquals([v.RANK, v.WORLD_SIZE, v.LOCAL_RANK, v.MASTER_ADDR, v.NCCL_NVLS_ENABLE], [String(rank), "3", String(rank), "127.0.0.1", "0"]);
    assertEquals(v.args, ["x", "--flag"]);
    ports.add(String(v.MASTER_PORT));
  }
  assertEquals(ports.size, 1);
  assert(Number([...ports][0]) > 0, "a free port was chosen");
});

test("lltm-run: node ranks are offset by --node-rank × --nproc-per-node", async () => {
  const r = await launch(["--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "2", "--master-port", "29999"], ["env"]);
  assertEquals(r.code, 0, r.stderr);
  assertEquals([...r.results.keys()].sort(), [2, 3]);
  for (const value of r.results.values()) {
    const v = value as Record<string, string>;
    assertEquals([v.WORLD_SIZE, v.MASTER_PORT], ["4", "29999"]);
  }
});

test("a failing rank ends the job within seconds, with a message naming the rank and its status", async () => {
  const r = await launch(["--nproc-per-node", "3", "--grace-seconds", "2"], ["fail", "1"]);
  assertEquals(r.code, 3, r.stderr);
  assert(/lltm-run: rank 1 \(local rank 1, pid \d+\) exited with code 3; stopping the other 2 ranks/.test(r.stderr), r.stderr);
  // The start of three processes, then at most the grace period.
  assert(r.ms < 30_000, `took ${r.ms} ms`);
});

test("a signal to lltm-run reaches every rank, and it exits with the signal's status", async () => {
  let signalled = false;
  // Each rank says so once the ranks have met, then waits forever.
  const r = await launch(["--nproc-per-node", "2"], ["fail", "-1"], {
    onStdout: (out, pid) => {
      if (!signalled && (out.match(/waiting/g) ?? []).length === 2) {
        signalled = true;
        process.kill(pid, "SIGTERM");
      }
    },
  });
  assertEquals(r.code, 143, r.stderr);
  assert(/received SIGTERM; passing it to every rank/.test(r.stderr), r.stderr);
});

test("lltm-run's command line: help, defaults, and refusals naming the option", () => {
  assertEquals(parseLaunchArgs(["--help"]), "help");
  const o = parseLaunchArgs(["--nproc-per-node=4", "train.ts", "--nproc-per-node", "9"]);
  assert(o !== "help");
  assertEquals([o.nprocPerNode, o.nnodes, o.nodeRank, o.masterAddr, o.masterPort, o.script, o.args], [
    4, 1, 0, "127.0.0.1", undefined, "train.ts", ["--nproc-per-node", "9"],
  ]);
  const refusals: [string[], RegExp][] = [
    [["--nproc-per-node", "0", "x.ts"], /--nproc-per-node must be an integer in \[1, 4096\], got "0"/],
    [["--master-port", "70000", "x.ts"], /--master-port must be an integer in \[1, 65535\]/],
    [["--nnodes", "2", "--node-rank", "2", "x.ts"], /--node-rank 2 must be below --nnodes 2/],
    [["--bogus", "1", "x.ts"], /unknown option --bogus/],
    [["--nproc-per-node", "2"], /no script given/],
  ];
  for (const [args, pattern] of refusals) {
    let message = "";
    try {
      parseLaunchArgs(args);
    } catch (e) {
      message = (e as Error).message;
    }
    assert(pattern.test(message), `${args.join(" ")}: ${message}`);
  }
});
