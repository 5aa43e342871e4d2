/**
 * A Worker of the oversubscription test: makes `calls` forward+backward
 * calls, cycling through the cases from `start`, and counts those whose
 * outputs differ from `expected` (the same calls made one at a time). It
 * says "ready" first: a message posted before its module (which awaits the
 * native binding) has finished loading can be lost under Bun.
 */
import type { ValueArray } from "../../ts/dtype.ts";
import { caseCount, identical, runCase } from "./calls.ts";

interface Task {
  start: number;
  calls: number;
  expected: ValueArray[][];
}

// A web Worker (Bun, Deno) talks through its global scope; a Node worker through parentPort.
const web = globalThis as unknown as { postMessage?: (message: unknown) => void };
const port: { postMessage(message: unknown): void; on(event: "message", f: (task: Task) => void): void } =
  typeof web.postMessage === "function"
    ? {
      postMessage: (m) => web.postMessage!(m),
      on: (_, f) => ((globalThis as unknown as { onmessage: (e: MessageEvent<Task>) => void }).onmessage = (e) => f(e.data)),
    }
    : (await import("node:worker_threads")).parentPort!;

port.on("message", ({ start, calls, expected }) => {
  let differ = 0;
  for (let i = 0; i < calls; ++i) {
    const k = (start + i) % caseCount;
    if (!identical(runCase(k), expected[k]!)) differ++;
  }
  port.postMessage({ calls, differ });
});

port.postMessage("ready");
