/** Runs a script in a child process of the runtime running the tests (Bun, Deno or Node), for what must not touch this one. */
import { spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import process from "node:process";

/** The command line: the runtime running the tests (with denoFlags under Deno), `script`, `args`. */
function command(script: string, args: readonly string[], denoFlags: readonly string[] = []): [string, string[]] {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  return deno
    ? [deno.execPath(), ["run", "--allow-all", ...denoFlags, script, ...args]]
    : [process.execPath, [...process.execArgv, script, ...args]];
}

export interface ChildOptions {
  env?: Record<string, string>;
  /** Flags for the runtime itself (e.g. Deno's --v8-flags=...); given to Deno only. */
  denoFlags?: readonly string[];
  timeoutMs?: number;
}

/** Runs `script` with `args` to its end. */
export function runChild(script: string, args: readonly string[] = [], options: ChildOptions = {}): SpawnSyncReturns<string> {
  const [cmd, argv] = command(script, args, options.denoFlags);
  return spawnSync(cmd, argv, {
    encoding: "utf8",
    env: { ...process.env, ...options.env },
    timeout: options.timeoutMs ?? 120_000,
  });
}

/** What a child run to its end gives back (as runChild's, without the blocking). */
export interface ChildResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` with `args` to its end without blocking this process, so that several may run at once. */
export function runChildAsync(script: string, args: readonly string[] = [], options: ChildOptions = {}): Promise<ChildResult> {
  const [cmd, argv] = command(script, args, options.denoFlags);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { env: { ...process.env, ...options.env }, timeout: options.timeoutMs ?? 120_000 });
    let stdout = "", stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (status: number | null) => resolve({ status, stdout, stderr }));
  });
}

/** Starts `script` with `args` in the background; the caller kills it. */
export function startChild(script: string, args: readonly string[] = []): ReturnType<typeof spawn> {
  const [cmd, argv] = command(script, args);
  return spawn(cmd, argv, { stdio: "ignore" });
}

/** A path of a file in tests/ as a plain file name. */
export function testFile(name: string): string {
  return decodeURIComponent(new URL(name, import.meta.url).pathname);
}
