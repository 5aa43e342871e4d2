/**
 * Atomic, durable file replacement: the bytes go to a temporary file in the
 * target's folder, which is flushed to disk and renamed over the target, and
 * the folder is flushed so that the rename survives a power cut. A reader sees
 * the old file or the new one, never half of one.
 *
 * A temporary file is named after its owner (`<file>.tmp.<host>.<pid>.<n>`):
 * a failed write removes its own at once, and a write that was killed
 * (SIGKILL, power cut) leaves one that the next write of the same file
 * removes, since its owner is gone.
 */
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

import { LLTMError, permissionError } from "./errors.ts";
import { ownerAlive, self } from "./owner.ts";

/** The host's name as it may appear in a file name. */
function fileHost(): string {
  return self().host.replace(/[^A-Za-z0-9.-]/g, "_");
}

/** An LLTMError with code "IO" for a failed file operation, naming the path and the system's reason. */
export function ioError(where: string, path: string, e: unknown): LLTMError {
  if (e instanceof LLTMError) return e;
  const denied = permissionError(e, `${where}: ${path}`);
  if (denied) return denied;
  const code = (e as { code?: string }).code;
  const reason = code ? `${code}: ${(e as Error).message}` : String(e);
  return new LLTMError("IO", `${where}: ${path}: ${reason}`);
}

/** Replaces `path` with the concatenation of `chunks`; `where` names the caller in errors. */
export function writeFileAtomic(where: string, path: string, chunks: readonly Uint8Array[]): void {
  const dir = dirname(path);
  removeStaleTemporaries(dir, basename(path));
  const temporary = `${path}.tmp.${fileHost()}.${self().pid}.${Math.floor(Math.random() * 2 ** 32).toString(36)}`;
  let fd: number | undefined;
  try {
    fd = openSync(temporary, "wx", 0o644);
    for (const chunk of chunks) {
      for (let done = 0; done < chunk.length;) done += writeSync(fd, chunk, done, chunk.length - done);
    }
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temporary, path);
  } catch (e) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch { /* the write's own error is the one to report */ }
    }
    try {
      unlinkSync(temporary);
    } catch { /* never made, or not removable: the write's own error is the one to report */ }
    throw ioError(where, path, e);
  }
  syncDirectory(dir);
}

/** Flushes a folder's entries (the rename); platforms that cannot open a folder (Windows) flush it themselves. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code !== "EISDIR" && code !== "EPERM" && code !== "EINVAL" && code !== "EACCES") throw ioError("fsync", dir, e);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Removes temporary files of `name` left by writers on this host that are no longer running. */
function removeStaleTemporaries(dir: string, name: string): void {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return; // the write itself will report an unreadable folder
  }
  const prefix = `${name}.tmp.`;
  for (const entry of entries) {
    if (!entry.startsWith(prefix)) continue;
    const m = /^(.+)\.(\d+)\.[0-9a-z]+$/.exec(entry.slice(prefix.length));
    if (!m || m[1] !== fileHost() || ownerAlive({ host: self().host, pid: Number(m[2]) })) continue;
    try {
      rmSync(join(dir, entry), { force: true });
    } catch { /* another writer removed it first, or it is not ours to remove */ }
  }
}
