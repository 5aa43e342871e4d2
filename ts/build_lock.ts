/**
 * The lock that makes processes building into one cache folder take turns: a
 * folder (mkdir is atomic) holding `owner.json`, the holder's pid, host and
 * start time. A waiter takes the lock over, saying so, when its holder is
 * gone (no such process on this host: a build that was killed) or, for a
 * holder on another host that cannot be probed, when it is older than the
 * stale limit. While a live holder builds, the waiter says whom it waits for.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { type Owner, ownerAlive, self } from "./owner.ts";

export interface LockOwner extends Owner {
  /** When the holder took the lock, in ms since the epoch. */
  started: number;
}

export interface LockOptions {
  /** A lock of another host older than this is stale (default 15 minutes). */
  staleMs?: number;
  /** How often to look again while waiting (default 200 ms). */
  pollMs?: number;
  /** Progress and take-over messages. */
  say: (message: string) => void;
}

const OWNER_FILE = "owner.json";
// A lock folder without an owner file is being created; one that stays so this long was left by a killed process.
const CREATING_MS = 10_000;

function ownerText(o: LockOwner): string {
  return `process ${o.pid} on ${o.host}, started ${new Date(o.started).toISOString()}`;
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const o = JSON.parse(readFileSync(join(path, OWNER_FILE), "utf8")) as Partial<LockOwner>;
    if (typeof o.pid === "number" && typeof o.host === "string" && typeof o.started === "number") {
      return { pid: o.pid, host: o.host, started: o.started };
    }
  } catch { /* missing or half-written */ }
  return undefined;
}

/** Why the lock at `path`, held by `owner` (undefined: no owner file yet), may be taken over, or undefined if not. */
function takeOverReason(path: string, owner: LockOwner | undefined, staleMs: number): string | undefined {
  if (owner === undefined) {
    let age: number;
    try {
      age = Date.now() - statSync(path).mtimeMs;
    } catch {
      return undefined; // removed meanwhile: the next mkdir decides
    }
    return age > CREATING_MS ? `it names no owner and is ${Math.round(age / 1000)} s old (its process was killed while taking it)` : undefined;
  }
  if (!ownerAlive(owner)) return `its owner, ${ownerText(owner)}, is no longer running`;
  if (owner.host !== self().host && Date.now() - owner.started > staleMs) {
    return `its owner, ${ownerText(owner)}, cannot be probed from this host and took it over ${Math.round(staleMs / 60000)} minutes ago`;
  }
  return undefined;
}

/** Takes the lock at `path`, waiting for a live holder; returns the function that releases it. */
export async function acquireLock(path: string, options: LockOptions): Promise<() => void> {
  const staleMs = options.staleMs ?? 15 * 60 * 1000;
  const pollMs = options.pollMs ?? 200;
  let waitingFor = "", lastSaid = 0;
  for (;;) {
    try {
      mkdirSync(path);
      const mine: LockOwner = { ...self(), started: Date.now() };
      writeFileSync(join(path, OWNER_FILE), JSON.stringify(mine));
      return () => {
        // Released only while still ours: a holder taken for dead must not remove its successor's lock.
        const now = readOwner(path);
        if (now && now.pid === mine.pid && now.host === mine.host && now.started === mine.started) {
          rmSync(path, { recursive: true, force: true });
        }
      };
    } catch (e) {
      if ((e as { code?: string }).code !== "EEXIST") throw e;
    }
    const owner = readOwner(path);
    const reason = takeOverReason(path, owner, staleMs);
    if (reason !== undefined) {
      options.say(`taking over the build lock ${path}: ${reason}`);
      removeIfStill(path, owner);
      continue;
    }
    const holder = owner ? ownerText(owner) : "a process that is taking it";
    if (holder !== waitingFor || Date.now() - lastSaid > 30_000) {
      options.say(`waiting for the build of ${holder} (lock ${path}; remove it if no build is running)`);
      waitingFor = holder;
      lastSaid = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/**
 * Removes the lock if it is still the one `owner` held: it is renamed aside first (atomic), and put back if
 * another waiter replaced it in between.
 */
function removeIfStill(path: string, owner: LockOwner | undefined): void {
  const aside = `${path}.stale.${self().pid}.${Math.floor(Math.random() * 2 ** 32).toString(36)}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // another waiter moved it first
  }
  const moved = readOwner(aside);
  const same = owner === undefined ? moved === undefined : moved !== undefined && moved.pid === owner.pid &&
    moved.host === owner.host && moved.started === owner.started;
  if (same) {
    rmSync(aside, { recursive: true, force: true });
    return;
  }
  try {
    renameSync(aside, path);
  } catch {
    rmSync(aside, { recursive: true, force: true });
  }
}
