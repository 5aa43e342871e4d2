/**
 * A Worker of the oversubscription test: makes `calls` forward+backward
 * calls, cycling through the cases from `start`, and counts those whose
 * outputs differ from `expected` (the same calls made one at a time). It
 * says "ready" first: a message posted before its module (which awaits the
 * native binding) has finished loading can be lost under Bun.
 */
import type { ValueArray } from "../../ts/dtype.ts";
import { parentPort } from "../workers.ts";
import { caseCount, identical, runCase } from "./calls.ts";

interface Task {
  start: number;
  calls: number;
  expected: ValueArray[][];
}

const port = await parentPort<Task>();

port.on("message", ({ start, calls, expected }) => {
  let differ = 0;
  for (let i = 0; i < calls; ++i) {
    const k = (start + i) % caseCount;
    if (!identical(runCase(k), expected[k]!)) differ++;
  }
  port.postMessage({ calls, differ });
});

port.postMessage("ready");
