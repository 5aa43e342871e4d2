/**
 * Accounting of native memory, so that forgotten tensors are reclaimed under
 * every runtime. A tensor that is never disposed is freed by a finalizer, but
 * the garbage collector sees only the small JavaScript object, not the block
 * it holds: V8 (Deno, Node) may let gigabytes of native memory pile up before
 * it collects. So every allocation is counted, and when the bytes allocated
 * since the lowest point since the last collection pass the budget, a
 * collection is forced (Bun.gc; V8's gc, exposed through node:v8 and node:vm
 * when the process was not started with --expose-gc). The finalizers then
 * run as soon as the program yields to the event loop.
 *
 * A loop that never yields cannot have its garbage finalized in any runtime;
 * when collections stop freeing anything, a warning names the bytes held.
 * The budget is LLTM_MEMORY_BUDGET_MB (default 256). A program that disposes
 * what it makes may still pass it with every call (one reserve of a large
 * sequence is bigger), and a full collection costs milliseconds: so while the
 * finalizers free less than a quarter of the budget between two forced
 * collections, the budget doubles (up to 16 times its base); once they free
 * more, it is back at its base.
 */
import v8 from "node:v8";
import vm from "node:vm";

import { environment } from "./native/index.ts";

const MiB = 2 ** 20;

export interface NativeMemoryStats {
  /** Bytes of native memory held by tensors now (host and devices). */
  liveBytes: number;
  /** Blocks of native memory held now. */
  liveBlocks: number;
  /** Collections forced by the budget so far. */
  collections: number;
  /** Bytes allocated since the low point that force the next collection. */
  budgetBytes: number;
}

const MAX_GROWTH = 16;

let liveBytes = 0, liveBlocks = 0, collections = 0;
let growth = 1; // the budget's multiple of its base
let finalizedBytes = 0; // freed by finalizers since the last forced collection
let low = 0; // the fewest live bytes since the last forced collection
let collectAt = -1;
// Growth without any release since `windowLow` past `warnAfter` means collections free nothing.
let windowLow = 0, warnAfter = 0;
let budget: number | undefined;
let collector: (() => void) | null | undefined;

function baseBudgetBytes(): number {
  if (budget === undefined) {
    const mb = Number(environment("LLTM_MEMORY_BUDGET_MB") ?? "256");
    budget = Number.isFinite(mb) && mb > 0 ? mb * MiB : 256 * MiB;
  }
  return budget;
}

function budgetBytes(): number {
  return growth * baseBudgetBytes();
}

/** This runtime's way to force a full collection, or null where there is none. */
function findCollector(): (() => void) | null {
  const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
  if (bun) return () => bun.gc(true);
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === "function") return exposed;
  try {
    // A context made after the flag is set has gc(); the flag changes nothing else.
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as unknown;
    return typeof gc === "function" ? (gc as () => void) : null;
  } catch {
    return null;
  }
}

/** Counts an allocation of `bytes`; may force a collection first when the budget is passed. */
export function allocated(bytes: number): void {
  liveBytes += bytes;
  liveBlocks++;
  // One comparison on the call path; `collectAt` is low + budget (-1 until the budget is read).
  if (liveBytes > collectAt) collect();
}

function collect(): void {
  if (collectAt < 0) {
    collectAt = low + budgetBytes();
    if (liveBytes <= collectAt) return;
  }
  if (collections > 0) growth = finalizedBytes < budgetBytes() / 4 ? Math.min(2 * growth, MAX_GROWTH) : 1;
  finalizedBytes = 0;
  collector ??= findCollector();
  collections++;
  collector?.();
  warnAfter ||= 4 * baseBudgetBytes();
  if (liveBytes - windowLow > warnAfter) {
    // The program allocates without disposing or yielding; said again only after twice the growth.
    windowLow = liveBytes;
    warnAfter *= 2;
    console.warn(
      `lltm: ${(liveBytes / MiB).toFixed(0)} MiB of native memory in ${liveBlocks} blocks is still held after ${collections} ` +
        "collections. Tensors that are not disposed are freed only after the program yields to the event loop; " +
        "dispose() them or declare them with `using`.",
    );
  }
  low = liveBytes;
  collectAt = low + budgetBytes();
}

/** Counts the release of `bytes`. */
export function released(bytes: number): void {
  liveBytes -= bytes;
  liveBlocks--;
  if (liveBytes < low) {
    low = liveBytes;
    if (collectAt >= 0) collectAt = low + budgetBytes();
  }
  if (liveBytes < windowLow) windowLow = liveBytes;
}

/** Counts the release of `bytes` by a finalizer: a tensor that was never disposed. */
export function finalized(bytes: number): void {
  finalizedBytes += bytes;
  released(bytes);
}

/** What lltm's tensors hold in native memory now, and how often the budget forced a collection. */
export function nativeMemory(): NativeMemoryStats {
  return { liveBytes, liveBlocks, collections, budgetBytes: budgetBytes() };
}
