/**
 * Tensors that are never disposed are reclaimed under every runtime: the
 * native bytes are counted and a collection is forced past a budget, so RSS
 * stays bounded (Deno let 400 forgotten 16 MiB tensors take 6 GiB); a loop
 * that never yields is told what it holds; a program that disposes tensors
 * larger than the budget is not stopped for a collection at each one.
 */
import { runChild, testFile } from "./child.ts";
import { assert, test } from "./harness.ts";

interface Report {
  made: number;
  peakMiB: number;
  endMiB: number;
  liveBytes: number;
  collections: number;
}

function run(mode: string, count: number, limitMiB: number, mib = 16): { report: Report; stderr: string } {
  const r = runChild(testFile("leak_child.ts"), [mode, String(count), String(mib), String(limitMiB)], {
    env: { LLTM_MEMORY_BUDGET_MB: "128" },
    timeoutMs: 300_000,
  });
  assert(r.status === 0, `the child failed (status ${r.status}, signal ${r.signal}): ${r.stderr.slice(-2000)}`);
  return { report: JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Report, stderr: r.stderr };
}

test("400 never-disposed 16 MiB tensors in a loop that yields keep RSS bounded", () => {
  const { report } = run("async", 400, 2048);
  assert(report.made === 400, `stopped after ${report.made} tensors at ${report.peakMiB} MiB of RSS`);
  assert(report.peakMiB < 1024, `peak RSS ${report.peakMiB} MiB for 6400 MiB of forgotten tensors`);
  assert(report.collections > 0, "the budget forced collections");
});

test("a loop that never yields is warned with the bytes held, and its tensors are freed once it yields", () => {
  const { report, stderr } = run("sync", 48, 4096);
  assert(/lltm: \d+ MiB of native memory in \d+ blocks is still held after \d+ collections/.test(stderr), `no warning: ${stderr}`);
  assert(report.liveBytes < 256 * 2 ** 20, `still held after yielding: ${report.liveBytes} bytes`);
});

test("tensors larger than the budget that are disposed force a few collections, not one each", () => {
  // 160 MiB each against a budget of 128: the budget doubles while collections find nothing to finalize.
  const { report } = run("disposed", 40, 4096, 160);
  assert(report.made === 40, `stopped after ${report.made} tensors at ${report.peakMiB} MiB of RSS`);
  assert(report.collections >= 1 && report.collections <= 5, `${report.collections} collections for 40 disposed tensors`);
  assert(report.liveBytes === 0, `still held: ${report.liveBytes} bytes`);
});
