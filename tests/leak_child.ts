/**
 * Child of native_memory.test.ts: makes `count` tensors of `mib` MiB that are
 * never disposed, yielding to the event loop after each ("async") or never
 * ("sync", then yielding a few times at the end), or that are disposed at
 * once ("disposed"), and prints the peak RSS and what lltm holds. It stops
 * early past `limit` MiB of RSS, so that a failure does not take the
 * machine's memory.
 */
import process from "node:process";

import { nativeMemory, Tensor } from "../ts/index.ts";

const [mode, count, mib, limit] = process.argv.slice(2);
const rss = () => process.memoryUsage().rss / 2 ** 20;
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
let peak = rss(), made = 0;
for (; made < Number(count); made++) {
  const t = Tensor.zeros([(Number(mib) * 2 ** 20) / 4]);
  if (mode === "disposed") t.dispose();
  peak = Math.max(peak, rss());
  if (peak > Number(limit)) break;
  if (mode === "async") await tick();
}
for (let i = 0; i < 5; i++) await tick();
console.log(JSON.stringify({ made, peakMiB: Math.round(peak), endMiB: Math.round(rss()), ...nativeMemory() }));
