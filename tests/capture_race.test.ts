/**
 * Captures on one thread while another computes on the same device: every
 * call of the other thread gives the result it gives alone, or is refused
 * by name; none returns what a capture recorded instead of running
 * (tests/capture_race/main.ts, in a process of its own under this runtime).
 */
import { runChild } from "./child.ts";
import { assert, cudaSkipReason, test } from "./harness.ts";

test("a capture on one Worker never records another thread's call: each gives its own result or is refused", () => {
  const script = new URL("./capture_race/main.ts", import.meta.url).pathname;
  const r = runChild(script, ["200", "120"], { timeoutMs: 180_000 });
  const out = (r.stdout ?? "").trim();
  assert(r.status === 0, `exit ${r.status ?? r.signal}: ${out} ${r.stderr ?? ""}`);
  console.log(`capture race: ${out.split("\n").pop()}`);
}, { skip: cudaSkipReason() });
