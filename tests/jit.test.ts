/** load(): builds once into the cache, does nothing when nothing changed, rebuilds only what a change affects. */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { load } from "../ts/index.ts";
import { assert, assertEquals, test } from "./harness.ts";

test("load() builds, then finds the build up to date, then recompiles only a changed file", async () => {
  const root = decodeURIComponent(new URL("..", import.meta.url).pathname);
  const work = mkdtempSync(join(tmpdir(), "lltm-jit-"));
  const sources = join(work, "src");
  for (const entry of ["CMakeLists.txt", "cmake", "csrc", "cuda"]) cpSync(join(root, entry), join(sources, entry), { recursive: true });
  // use: false, so that the library the other tests use stays the package's.
  const options = { sourceDir: sources, cacheDir: join(work, "cache"), cuda: "off" as const, use: false };

  const first = await load(options);
  assert(first.rebuilt, "the first load builds");
  const second = await load(options);
  assert(!second.rebuilt, "nothing changed: no build");
  assertEquals(second.path, first.path);

  const file = join(sources, "csrc", "status.cpp");
  writeFileSync(file, readFileSync(file, "utf8") + "\n// touched by the test\n");
  const third = await load(options);
  assert(third.rebuilt, "a changed source rebuilds");
  const compiled = third.log.split("\n").filter((line) => /Building CXX object/.test(line));
  assertEquals(compiled.length, 1, `compiled: ${compiled.join(" | ")}`);
  assert(/status\.cpp/.test(compiled[0]!), compiled[0]!);
});
