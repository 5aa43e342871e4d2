/**
 * The launcher behind `lltm-run` (as torchrun): one process per GPU (or CPU
 * slot) of this node, each started under the runtime running the launcher
 * (Bun, Deno or Node) with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
 * MASTER_ADDR and MASTER_PORT set, NCCL_NVLS_ENABLE=0 (NVLink multicast off),
 * and LLTM_NUM_THREADS splitting this machine's CPUs between them unless
 * set. Signals it receives go to every rank; when one rank fails, the
 * others are stopped (SIGTERM, then SIGKILL after a grace period) and the
 * launcher exits with the failing rank's status, naming it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as net from "node:net";
import * as os from "node:os";
import process from "node:process";

export interface LaunchOptions {
  nprocPerNode: number;
  nnodes: number;
  nodeRank: number;
  masterAddr: string;
  /** undefined: a free port on this machine (one node), else 29500. */
  masterPort: number | undefined;
  script: string;
  args: string[];
  /** Seconds between SIGTERM and SIGKILL for the ranks left when one fails (default 3). */
  graceSeconds: number;
}

export const launchUsage = `usage: lltm-run [--nproc-per-node N] [--nnodes M --node-rank R] [--master-addr A] [--master-port P]
                [--grace-seconds S] script.ts [script arguments...]

Starts N processes of script.ts on this node (rank = R * N + local rank), under the runtime running
lltm-run (Bun, Deno with every permission, or Node), with RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and NCCL_NVLS_ENABLE=0 set. The script calls
initProcessGroup({ backend: "nccl" }) (one GPU per process, cuda:LOCAL_RANK) or { backend: "cpu" }.
When a rank fails, the others are stopped and lltm-run exits with its status.
  --nproc-per-node N   processes on this node (default 1)
  --nnodes M           nodes of the job (default 1); run lltm-run on each with its --node-rank
  --node-rank R        this node's index (default 0)
  --master-addr A      the host of rank 0, which runs the store (default 127.0.0.1)
  --master-port P      its port (default: a free port with one node, else 29500)
  --grace-seconds S    time the other ranks get to end after one fails (default 3)`;

/** The options of `argv` (the arguments after the program's name); an Error saying what is wrong. */
export function parseLaunchArgs(argv: readonly string[]): LaunchOptions | "help" {
  const o: LaunchOptions = {
    nprocPerNode: 1, nnodes: 1, nodeRank: 0, masterAddr: "127.0.0.1", masterPort: undefined, script: "", args: [], graceSeconds: 3,
  };
  const integer = (name: string, value: string | undefined, min: number, max = 2 ** 31 - 1): number => {
    const n = Number(value);
    if (value === undefined || value === "" || !Number.isInteger(n) || n < min || n > max) {
      throw new Error(`lltm-run: ${name} must be an integer in [${min}, ${max}], got ${value === undefined ? "nothing" : JSON.stringify(value)}`);
    }
    return n;
  };
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "-h" || arg === "--help") return "help";
    if (!arg.startsWith("--")) break;
    const eq = arg.indexOf("=");
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const value = eq < 0 ? argv[++i] : arg.slice(eq + 1);
    switch (name) {
      case "--nproc-per-node":
      case "--nproc_per_node":
        o.nprocPerNode = integer(name, value, 1, 4096);
        break;
      case "--nnodes":
        o.nnodes = integer(name, value, 1, 65536);
        break;
      case "--node-rank":
      case "--node_rank":
        o.nodeRank = integer(name, value, 0, 65535);
        break;
      case "--master-addr":
      case "--master_addr":
        if (value === undefined || value === "") throw new Error(`lltm-run: ${name} needs a host`);
        o.masterAddr = value;
        break;
      case "--master-port":
      case "--master_port":
        o.masterPort = integer(name, value, 1, 65535);
        break;
      case "--grace-seconds":
        o.graceSeconds = integer(name, value, 0, 3600);
        break;
      default:
        throw new Error(`lltm-run: unknown option ${name} (see --help)`);
    }
  }
  if (i >= argv.length) throw new Error("lltm-run: no script given (see --help)");
  if (o.nodeRank >= o.nnodes) throw new Error(`lltm-run: --node-rank ${o.nodeRank} must be below --nnodes ${o.nnodes}`);
  o.script = argv[i]!;
  o.args = argv.slice(i + 1);
  return o;
}

/** The command that runs `script` under the runtime running this code. */
function runtimeCommand(script: string, args: readonly string[]): [string, string[]] {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  if (deno) return [deno.execPath(), ["run", "--allow-all", script, ...args]];
  if (typeof (globalThis as { Bun?: unknown }).Bun !== "undefined") return [process.execPath, [script, ...args]];
  const flags = [...process.execArgv];
  if (!flags.includes("--experimental-ffi")) flags.push("--experimental-ffi");
  if (!flags.some((f) => f.startsWith("--disable-warning"))) flags.push("--disable-warning=ExperimentalWarning");
  return [process.execPath, [...flags, script, ...args]];
}

/** A port nothing listens on now. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen({ host, port: 0 }, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const signalNumbers: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** Runs the job's processes on this node to their end; the exit status for the launcher. */
export async function launch(o: LaunchOptions, log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<number> {
  const masterPort = o.masterPort ?? (o.nnodes === 1 ? await freePort(o.masterAddr) : 29500);
  const worldSize = o.nnodes * o.nprocPerNode;
  const cpus = typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length;
  const [command, argv] = runtimeCommand(o.script, o.args);
  const children: { child: ChildProcess; rank: number; local: number; done: boolean }[] = [];
  let failure: number | undefined;
  let stopping = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;

  const stopOthers = (signal: NodeJS.Signals) => {
    for (const c of children) if (!c.done) c.child.kill(signal);
    if (killTimer === undefined && signal !== "SIGKILL") {
      killTimer = setTimeout(() => {
        for (const c of children) {
          if (c.done) continue;
          log(`lltm-run: rank ${c.rank} (pid ${c.child.pid}) did not end within ${o.graceSeconds} s; killing it`);
          c.child.kill("SIGKILL");
        }
      }, o.graceSeconds * 1000);
    }
  };
  const forward = (signal: NodeJS.Signals) => {
    stopping = true;
    failure ??= 128 + (signalNumbers[signal] ?? 15);
    log(`lltm-run: received ${signal}; passing it to every rank`);
    stopOthers(signal);
  };
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, forward);

  const ended = new Promise<void>((resolve) => {
    let left = o.nprocPerNode;
    for (let local = 0; local < o.nprocPerNode; local++) {
      const rank = o.nodeRank * o.nprocPerNode + local;
      const env: Record<string, string | undefined> = {
        ...process.env,
        RANK: String(rank),
        WORLD_SIZE: String(worldSize),
        LOCAL_RANK: String(local),
        LOCAL_WORLD_SIZE: String(o.nprocPerNode),
        GROUP_RANK: String(o.nodeRank),
        MASTER_ADDR: o.masterAddr,
        MASTER_PORT: String(masterPort),
        NCCL_NVLS_ENABLE: "0",
        LLTM_NUM_THREADS: process.env.LLTM_NUM_THREADS ?? String(Math.max(1, Math.floor(cpus / o.nprocPerNode))),
      };
      const child = spawn(command, argv, { stdio: "inherit", env });
      const entry = { child, rank, local, done: false };
      children.push(entry);
      const finish = (code: number | null, signal: NodeJS.Signals | null) => {
        if (entry.done) return;
        entry.done = true;
        left--;
        const failed = code !== 0;
        if (failed && !stopping) {
          stopping = true;
          failure = code ?? 128 + (signalNumbers[signal ?? "SIGTERM"] ?? 15);
          const how = signal !== null ? `was killed by ${signal}` : `exited with code ${code}`;
          log(
            `lltm-run: rank ${rank} (local rank ${local}, pid ${child.pid}) ${how}; stopping the other ` +
              `${o.nprocPerNode - 1} rank${o.nprocPerNode - 1 === 1 ? "" : "s"} of this node`,
          );
          stopOthers("SIGTERM");
        }
        if (left === 0) resolve();
      };
      child.on("exit", finish);
      child.on("error", (e) => {
        log(`lltm-run: rank ${rank} could not start ${command}: ${e.message}`);
        finish(127, null);
      });
    }
  });
  await ended;
  if (killTimer !== undefined) clearTimeout(killTimer);
  for (const s of signals) process.off(s, forward);
  return failure ?? 0;
}
