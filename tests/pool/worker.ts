/**
 * A Worker of the oversubscription test: makes `calls` forward+backward
 * calls, cycling through the cases from `start`, and counts those whose
 * outputs differ from `expected` (the same calls made one at a time). It
 * says "ready" first: a message posted before its module (which awaits the
 * native binding) has finished loading can be lost under Bun.
 */
import { caseCount, identical, runCase } from "./calls.ts";

interface Task {
  start: number;
  calls: number;
  expected: (Float32Array | Float64Array)[][];
}

const scope = globalThis as unknown as {
  onmessage: ((e: MessageEvent<Task>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = (e) => {
  const { start, calls, expected } = e.data;
  let differ = 0;
  for (let i = 0; i < calls; ++i) {
    const k = (start + i) % caseCount;
    if (!identical(runCase(k), expected[k]!)) differ++;
  }
  scope.postMessage({ calls, differ });
};

scope.postMessage("ready");
