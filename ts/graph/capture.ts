/**
 * The step capture in progress, if any: what the library records on a CUDA
 * device's stream between compileStep's begin and end. Code whose host side
 * must run again at every replay (an optimizer's step count, a schedule's
 * lr copied to the device) registers it here while the step is captured;
 * code that cannot be captured (a host-drawn mask, a host counter baked into
 * a call) asks whether a capture is running and refuses.
 */
import type { Device } from "../device.ts";
import { LLTMError } from "../errors.ts";

export interface Capture {
  readonly device: Device;
  /** Runs `hook` before every replay of the graph being captured (host state the graph cannot advance itself). */
  beforeReplay(hook: () => void): void;
}

let current: Capture | undefined;

/** The capture in progress (on this thread), or undefined. */
export function activeCapture(): Capture | undefined {
  return current;
}

/** Runs `body` as capture `c`, restoring the previous state however it ends. */
export function withCapture<T>(c: Capture, body: () => T): T {
  if (current !== undefined) throw new LLTMError("INVALID_ARGUMENT", "compileStep: a step is already being captured; steps do not nest");
  current = c;
  try {
    return body();
  } finally {
    current = undefined;
  }
}

/** Refuses, naming `fn`, what cannot be part of a captured step, saying `why`. */
export function refuseUnderCapture(fn: string, why: string): void {
  if (current !== undefined) throw new LLTMError("INVALID_ARGUMENT", `${fn}: cannot run inside a captured step (compileStep): ${why}`);
}
