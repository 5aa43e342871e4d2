/**
 * The CPU thread pool under oversubscription: 8 pool threads on this
 * machine's cores, 4 Workers calling forward and backward at once, every
 * result bit-identical to the same call made alone, and no hang (the child
 * process has a deadline). LLTM_POOL_CALLS sets the number of calls (the
 * issue's full run: LLTM_POOL_CALLS=10000); the default keeps the suite fast.
 */
import { spawnSync } from "node:child_process";

import { assert, test } from "./harness.ts";

const calls = Number(process.env.LLTM_POOL_CALLS ?? 400);
const timeoutS = Math.max(60, Math.ceil(calls / 20));

test(`pool: 4 Workers x ${calls} forward+backward calls on 8 threads match the calls made alone`, () => {
  const main = new URL("./pool/main.ts", import.meta.url).pathname;
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  const command = deno ? [deno.execPath(), "run", "--allow-all", main] : [process.execPath, ...process.execArgv, main];
  const r = spawnSync(command[0]!, [...command.slice(1), String(calls), "4", String(timeoutS)], {
    encoding: "utf8",
    env: { ...process.env, LLTM_NUM_THREADS: "8" },
    timeout: (timeoutS + 60) * 1000,
  });
  const out = (r.stdout ?? "").trim();
  assert(r.status === 0, `exit ${r.status ?? r.signal}: ${out} ${r.stderr ?? ""}`);
  const result = JSON.parse(out.split("\n").pop()!) as { calls: number; differ: number };
  assert(result.calls === calls && result.differ === 0, out);
  console.log(`pool: ${out}`);
});
