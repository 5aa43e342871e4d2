/**
 * The rendezvous variables as torchrun, SLURM wrappers and Kubernetes
 * training operators set them: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
 * MASTER_PORT. A value given in code takes precedence over the variable.
 */
import process from "node:process";

import { LLTMError } from "../errors.ts";

export interface Rendezvous {
  rank: number;
  worldSize: number;
  localRank: number;
  masterAddr: string;
  masterPort: number;
}

export interface RendezvousOptions {
  rank?: number;
  worldSize?: number;
  localRank?: number;
  masterAddr?: string;
  masterPort?: number;
}

function integer(fn: string, name: string, given: number | undefined, variable: string, fallback: number | undefined, min: number): number {
  const raw = given ?? (process.env[variable] !== undefined && process.env[variable] !== "" ? Number(process.env[variable]) : fallback);
  const source = given !== undefined ? `'${name}'` : `${variable}=${JSON.stringify(process.env[variable])}`;
  if (raw === undefined) throw new LLTMError("INVALID_ARGUMENT", `${fn}: '${name}' is not given and ${variable} is not set`);
  if (!Number.isInteger(raw) || raw < min || raw > 2 ** 31 - 1) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: ${source} must be an integer of at least ${min}`);
  }
  return raw;
}

/** The rendezvous of this process; with nothing set, a group of one (rank 0 of 1). */
export function rendezvous(fn: string, options: RendezvousOptions): Rendezvous {
  const worldSize = integer(fn, "worldSize", options.worldSize, "WORLD_SIZE", 1, 1);
  const rank = integer(fn, "rank", options.rank, "RANK", worldSize === 1 ? 0 : undefined, 0);
  if (rank >= worldSize) throw new LLTMError("INVALID_ARGUMENT", `${fn}: rank ${rank} is not below the world size ${worldSize}`);
  const localRank = integer(fn, "localRank", options.localRank, "LOCAL_RANK", rank, 0);
  const masterAddr = options.masterAddr ?? process.env.MASTER_ADDR ?? (worldSize === 1 ? "127.0.0.1" : undefined);
  if (masterAddr === undefined || masterAddr === "") {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: a group of ${worldSize} needs 'masterAddr' or MASTER_ADDR (the host of rank 0's store)`);
  }
  const masterPort = integer(fn, "masterPort", options.masterPort, "MASTER_PORT", worldSize === 1 ? 0 : undefined, 0);
  if (masterPort > 65535) throw new LLTMError("INVALID_ARGUMENT", `${fn}: the master port must be at most 65535, got ${masterPort}`);
  return { rank, worldSize, localRank, masterAddr, masterPort };
}
