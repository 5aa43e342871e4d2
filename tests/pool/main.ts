/**
 * The oversubscription test's process (run it with LLTM_NUM_THREADS above
 * the core count): computes every case one call at a time, then has
 * `workers` Workers make `calls` forward+backward calls in all, at once, and
 * checks each result bit for bit against the one-at-a-time result. Prints
 * one JSON line; exits 1 on a difference, 2 when the Workers do not finish
 * within `timeout` seconds (a hang).
 *
 * usage: bun tests/pool/main.ts [calls=10000] [workers=4] [timeout=300]
 *        deno run --allow-all tests/pool/main.ts [...]
 *        node --experimental-ffi tests/pool/main.ts [...]
 */
import { backendInfo } from "../../ts/index.ts";
import { startWorker } from "../workers.ts";
import { caseCount, runCase } from "./calls.ts";

type Reply = "ready" | { calls: number; differ: number };

const [calls = 10000, workers = 4, timeout = 300] = (globalThis.process?.argv ?? ["", "", ...Deno.args])
  .slice(2).map(Number);
const expected = Array.from({ length: caseCount }, (_, k) => runCase(k));

const started = performance.now();
const timer = setTimeout(() => {
  console.log(JSON.stringify({ error: `Workers did not finish within ${timeout} s` }));
  process.exit(2);
}, timeout * 1000);

const results = await Promise.all(Array.from({ length: workers }, (_, w) => new Promise<{ calls: number; differ: number }>(
  (resolve, reject) => {
    const share = Math.floor(calls / workers) + (w < calls % workers ? 1 : 0);
    const worker = startWorker<Reply>(new URL("./worker.ts", import.meta.url), (reply) => {
      if (reply === "ready") return void worker.then((x) => x.post({ start: w * 3, calls: share, expected }));
      void worker.then((x) => x.terminate());
      resolve(reply);
    }, (message) => reject(new Error(`Worker ${w}: ${message}`)));
  },
)));
clearTimeout(timer);

const differ = results.reduce((n, r) => n + r.differ, 0);
const done = results.reduce((n, r) => n + r.calls, 0);
const info = backendInfo();
console.log(JSON.stringify({ calls: done, workers, differ, seconds: (performance.now() - started) / 1000, threads: info }));
process.exit(differ === 0 ? 0 : 1);
