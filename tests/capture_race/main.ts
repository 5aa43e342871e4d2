/**
 * The capture race's process: a Worker begins and ends captures of cuda:0
 * over and over while this thread runs the step and the sequence engine on
 * cuda:0 (float32 and bfloat16, the latter staged through float32) and reads
 * each result back. Every call must either give the bits it gave before the
 * Worker started, or be refused because another thread is capturing: a call
 * whose work a capture recorded instead of running would return whatever
 * its memory held. Prints one JSON line; exits 1 on a wrong result or
 * another error, 2 on a hang past `timeout` seconds.
 *
 * usage: bun tests/capture_race/main.ts [captures=200] [timeout=120]
 *        deno run --allow-all tests/capture_race/main.ts [...]
 *        node --experimental-ffi tests/capture_race/main.ts [...]
 */
import { type DType, LLTMError, lltmForward, lltmSequenceForward, Tensor } from "../../ts/index.ts";
import type { ValueArray } from "../../ts/dtype.ts";
import { startWorker } from "../workers.ts";

type Reply = "ready" | { made: number };

const [captures = 200, timeout = 120] = (globalThis.process?.argv ?? ["", "", ...Deno.args]).slice(2).map(Number);
const dtypes: readonly DType[] = ["float32", "bfloat16"];

/** Every output of one step and one 5-step sequence forward in `dtype` on cuda:0, read back. */
function run(dtype: DType): ValueArray[] {
  const o = (seed: number) => ({ dtype, seed, device: "cuda" as const });
  const [B, F, S] = [7, 13, 45];
  using input = Tensor.randn([B, F], o(1));
  using weights = Tensor.randn([3 * S, S + F], o(2));
  using bias = Tensor.randn([3 * S], o(3));
  using h = Tensor.randn([B, S], o(4));
  using c = Tensor.randn([B, S], o(5));
  using inputs = Tensor.randn([5, B, F], o(6));
  using f = lltmForward(input, weights, bias, h, c);
  using s = lltmSequenceForward(inputs, weights, bias, h, c);
  return [f.newH, f.newCell, s.outputs, s.lastH, s.lastCell].map((t) => t.toTypedArray());
}

const same = (a: ValueArray[], b: ValueArray[]) =>
  a.length === b.length && a.every((x, i) => x.length === b[i]!.length && x.every((v, j) => Object.is(v, b[i]![j])));

const expected = dtypes.map(run);
const timer = setTimeout(() => {
  console.log(JSON.stringify({ error: `no end within ${timeout} s` }));
  process.exit(2);
}, timeout * 1000);

let workerDone: { made: number } | undefined;
let workerError: string | undefined;
const worker = await startWorker<Reply>(new URL("./worker.ts", import.meta.url), (reply) => {
  if (reply === "ready") worker.post({ captures });
  else workerDone = reply;
}, (message) => void (workerError = message));

let calls = 0, refused = 0, wrong = 0;
const others: string[] = [];
// The Worker's messages arrive between this loop's turns: yield to them every call.
while (workerDone === undefined && workerError === undefined) {
  const k = calls++ % dtypes.length;
  try {
    if (!same(run(dtypes[k]!), expected[k]!)) wrong++;
  } catch (e) {
    if (e instanceof LLTMError && e.message.includes("being captured by another thread")) refused++;
    else if (others.length < 5) others.push(String(e));
  }
  await new Promise((resolve) => setTimeout(resolve, 0));
}
clearTimeout(timer);
worker.terminate();
const result = { calls, refused, wrong, others, made: workerDone?.made, workerError };
console.log(JSON.stringify(result));
process.exit(wrong === 0 && others.length === 0 && workerError === undefined && workerDone?.made === captures ? 0 : 1);
