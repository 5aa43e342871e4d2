/**
 * Runs any command beside N busy processes (scripts/contention.ts), e.g.
 * PyTorch's side of a contention benchmark:
 *
 *   bun scripts/contend.ts 2 -- /usr/bin/python3 ../shared/bench/torch_lltm.py --device cpu
 *
 * The command inherits stdin, stdout and stderr; the busy processes end with
 * it (also on Ctrl-C), and this script exits with its status.
 *
 * usage: bun scripts/contend.ts N [--] command [args...]
 */
import { spawn } from "node:child_process";

import { fail, parseArgs } from "./args.ts";
import { startContention } from "./contention.ts";

const usage = "usage: bun scripts/contend.ts N [--] command [args...]";
const argv = process.argv.slice(2);
// N goes through the strict parser (so a flag in its place, or --help, is handled); the rest is the command's own.
parseArgs(argv.slice(0, 1), { positionals: true }, usage);
const count = Number(argv[0]);
if (!Number.isInteger(count) || count < 0) fail(`N must be a non-negative integer, got ${argv[0] ?? "nothing"}`, usage);
const command = argv.slice(argv[1] === "--" ? 2 : 1);
if (command.length === 0) fail("no command given", usage);

// Registered before contention.ts's handlers (which exit): the command gets the signal too.
let child: ReturnType<typeof spawn> | undefined;
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child?.kill(signal));
const busy = startContention(count);
// The busy processes get a moment to start spinning before the command does.
await new Promise((r) => setTimeout(r, 200));
// Spawned without blocking, so that Ctrl-C and SIGTERM reach contention.ts's handlers at once.
child = spawn(command[0]!, command.slice(1), { stdio: "inherit" });
const status = await new Promise<number>((resolve) => {
  child!.on("error", (e) => {
    console.error(`error: ${command[0]} could not run: ${e.message}`);
    resolve(127);
  });
  child!.on("exit", (code, signal) => resolve(code ?? 128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 9)));
});
busy.stop();
process.exit(status);
