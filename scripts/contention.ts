/**
 * Busy processes beside a benchmark: N processes that spin on the CPU until
 * they are stopped, to time code on a loaded machine. Each is ended when the
 * owner disposes the handle, when this process exits, on Ctrl-C (SIGINT) or
 * SIGTERM, and in any case by its own deadline or as soon as its parent is
 * gone, so none outlives the run that started it.
 */
import { type ChildProcess, spawn } from "node:child_process";

// Spins until the deadline, checking now and then that the parent still lives.
const busyLoop = (seconds: number) => `
const end = Date.now() + ${seconds * 1000}, parent = process.ppid;
let x = 0;
for (;;) {
  for (let i = 0; i < 1e6; i++) x = (x + i) | 0;
  if (Date.now() > end || process.ppid !== parent) process.exit(0);
}`;

export interface Contention extends Disposable {
  readonly count: number;
  stop(): void;
}

/** Starts `count` busy processes, each ending by itself after `maxSeconds` at the latest. */
export function startContention(count: number, maxSeconds = 900): Contention {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  const exec = deno ? deno.execPath() : process.execPath;
  const code = busyLoop(maxSeconds);
  const children: ChildProcess[] = [];
  for (let i = 0; i < count; i++)
    children.push(spawn(exec, deno ? ["eval", code] : ["-e", code], { stdio: "ignore" }));

  const stop = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    process.off("exit", stop);
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
  };
  const interrupted = (signal: NodeJS.Signals) => {
    stop();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.on("exit", stop);
  process.on("SIGINT", interrupted);
  process.on("SIGTERM", interrupted);
  return { count, stop, [Symbol.dispose]: stop };
}
