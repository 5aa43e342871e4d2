/** Temporary folders for the tests, removed once the file's tests have run, pass or fail. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll } from "./harness.ts";

/**
 * A new folder under the system's temporary folder, named `prefix` and a
 * random suffix. Call it at a test file's top level, where every runner
 * takes an after-all hook (bun:test ignores one added inside a test); a test
 * that needs a folder of its own makes it inside this one.
 */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
