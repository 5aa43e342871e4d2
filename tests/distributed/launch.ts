/** Runs lltm-run (ts/bin/lltm_run.ts) under the runtime running the tests, as a user would, and reads what its ranks print. */
import { spawn } from "node:child_process";
import process from "node:process";

import { testFile } from "../child.ts";

export interface LaunchResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** What each rank printed on its RESULT line, by rank. */
  results: Map<number, unknown>;
}

export const launcherScript = testFile("../ts/bin/lltm_run.ts");
export const workerScript = testFile("distributed/worker.ts");

function command(args: readonly string[]): [string, string[]] {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  return deno ? [deno.execPath(), ["run", "--allow-all", launcherScript, ...args]] : [process.execPath, [...process.execArgv, launcherScript, ...args]];
}

/** Starts `lltm-run <launcherArgs> worker.ts <workerArgs>`; `onStdout` sees its output as it comes (with its pid, to signal it). */
export function launch(
  launcherArgs: readonly string[], workerArgs: readonly string[],
  options: { env?: Record<string, string>; timeoutMs?: number; onStdout?: (stdoutSoFar: string, pid: number) => void } = {},
): Promise<LaunchResult> {
  const [cmd, argv] = command([...launcherArgs, workerScript, ...workerArgs]);
  const started = Date.now();
  const child = spawn(cmd, argv, { env: { ...process.env, ...options.env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "", stderr = "";
  child.stdout.on("data", (d: Uint8Array) => {
    stdout += new TextDecoder().decode(d);
    options.onStdout?.(stdout, child.pid!);
  });
  child.stderr.on("data", (d: Uint8Array) => (stderr += new TextDecoder().decode(d)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`lltm-run did not end within ${options.timeoutMs ?? 120_000} ms; stderr: ${stderr}`));
    }, options.timeoutMs ?? 120_000);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const results = new Map<number, unknown>();
      for (const m of stdout.matchAll(/^RESULT (\d+) (.*)$/gm)) results.set(Number(m[1]), JSON.parse(m[2]!));
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started, results });
    });
  });
}
