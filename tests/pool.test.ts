/**
 * The CPU thread pool under oversubscription: 8 pool threads on this
 * machine's cores, 4 Workers calling forward and backward at once, every
 * result bit-identical to the same call made alone, and no hang (the child
 * process has a deadline). LLTM_POOL_CALLS sets the number of calls (the
 * issue's full run: LLTM_POOL_CALLS=10000); the default keeps the suite fast.
 */
import { spawnSync } from "node:child_process";

import { assert, test } from "./harness.ts";

const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;

/** Runs a script of tests/pool/ in this runtime, in a process of its own. */
function runScript(script: string, args: string[], env: Record<string, string | undefined>, timeoutS: number, prefix: string[] = []) {
  const path = new URL(`./pool/${script}`, import.meta.url).pathname;
  const command = [...prefix, ...(deno ? [deno.execPath(), "run", "--allow-all", path] : [process.execPath, ...process.execArgv, path])];
  return spawnSync(command[0]!, [...command.slice(1), ...args], { encoding: "utf8", env, timeout: timeoutS * 1000 });
}

const calls = Number(process.env.LLTM_POOL_CALLS ?? 400);
const timeoutS = Math.max(60, Math.ceil(calls / 20));

test(`pool: 4 Workers x ${calls} forward+backward calls on 8 threads match the calls made alone`, () => {
  const env = { ...process.env, LLTM_NUM_THREADS: "8" };
  const r = runScript("main.ts", [String(calls), "4", String(timeoutS)], env, timeoutS + 60);
  const out = (r.stdout ?? "").trim();
  assert(r.status === 0, `exit ${r.status ?? r.signal}: ${out} ${r.stderr ?? ""}`);
  const result = JSON.parse(out.split("\n").pop()!) as { calls: number; differ: number; threads: { threads: number } };
  assert(result.calls === calls && result.differ === 0 && result.threads.threads === 8, out);
  console.log(`pool: ${out}`);
});

test("pool: the thread count comes from LLTM_NUM_THREADS, else the affinity mask or cgroup quota", () => {
  const info = (env: Record<string, string | undefined>, prefix: string[] = []) => {
    const r = runScript("info.ts", [], env, 60, prefix);
    assert(r.status === 0, `exit ${r.status ?? r.signal}: ${r.stdout} ${r.stderr}`);
    return JSON.parse(r.stdout.trim()) as { threads: number; threadsSource: string };
  };
  const { LLTM_NUM_THREADS: _, ...rest } = process.env;
  const fromEnv = info({ ...rest, LLTM_NUM_THREADS: "3" });
  assert(fromEnv.threads === 3 && fromEnv.threadsSource === "environment", JSON.stringify(fromEnv));
  for (const bad of ["0", "abc", "-2"]) {
    const ignored = info({ ...rest, LLTM_NUM_THREADS: bad });
    assert(ignored.threadsSource !== "environment" && ignored.threads >= 1, `LLTM_NUM_THREADS=${bad}: ${JSON.stringify(ignored)}`);
  }
  const auto = info(rest);
  assert(["affinity", "cgroup", "hardware"].includes(auto.threadsSource) && auto.threads >= 1, JSON.stringify(auto));
  // One CPU in the mask: one thread (unless a cgroup quota is lower still, which cannot go below one).
  if (spawnSync("taskset", ["-c", "0", "true"]).status === 0) {
    const pinned = info(rest, ["taskset", "-c", "0"]);
    assert(pinned.threads === 1 && pinned.threadsSource !== "environment", JSON.stringify(pinned));
  }
});
