/**
 * Who holds a build lock or a temporary file: this process's id and host, and
 * whether another holder is still running. A holder on another host (a shared
 * network cache) cannot be probed, so it counts as alive.
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import process from "node:process";

export interface Owner {
  pid: number;
  host: string;
}

let me: Owner | undefined;

/** This process. Deno gives the host name only with --allow-sys, so /etc/hostname stands in for it. */
export function self(): Owner {
  if (me) return me;
  let host = "";
  try {
    host = hostname();
  } catch {
    try {
      host = readFileSync("/etc/hostname", "utf8").trim();
    } catch { /* no way to tell hosts apart: every holder counts as local */ }
  }
  me = { pid: process.pid, host: host || "localhost" };
  return me;
}

/** Whether `owner` may still be running: false only when it is on this host and no process has its id. */
export function ownerAlive(owner: Owner): boolean {
  const { pid, host } = self();
  if (owner.host !== host) return true;
  if (owner.pid === pid) return true;
  if (!Number.isSafeInteger(owner.pid) || owner.pid <= 0) return false;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to another user.
    return (e as { code?: string }).code !== "ESRCH";
  }
}
