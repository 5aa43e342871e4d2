/**
 * The native boundary has one door: outside ts/native/, library code (ts/
 * and scripts/) imports the native layer only through ts/native/index.ts (its
 * calls, the loader) or ts/native/constants.ts, never the library handle, the
 * runtime bindings or the descriptor writer, and calls no C function itself.
 * (Tests of the C ABI itself, in tests/, may.)
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

import { assert, assertEquals, test } from "./harness.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return path === join("ts", "native") ? [] : sources(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

const allowedModules = new Set(["index.ts", "constants.ts"]);

/** The rule's violations in one file's text. */
function violations(path: string, text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
    const spec = m[1]!;
    const native = /(?:^|\/)native\/([^/]+)$/.exec(spec);
    if (native && !allowedModules.has(native[1]!)) found.push(`${path} imports ${spec}`);
  }
  for (const m of text.matchAll(/\b(native\(\)|DescriptorBlock|describe\(|\.lltm_[a-z_]+\()/g)) {
    found.push(`${path} uses ${m[1]}`);
  }
  return found;
}

test("outside ts/native/, nothing opens the library, holds its handle or writes a descriptor", () => {
  const files = [...sources("ts"), ...sources("scripts")];
  assert(files.length > 20, `found only ${files.length} files`);
  const found = files.flatMap((f) => violations(relative(root, join(root, f)), readFileSync(join(root, f), "utf8")));
  assertEquals(found, [], "files crossing the native boundary");
});

test("the boundary rule catches what it is meant to", () => {
  const bad = [
    'import { native } from "./native/library.ts";',
    'import { open } from "../ts/native/bun.ts";',
    'import { DescriptorBlock } from "./native/descriptor.ts";',
    "const lib = native();",
    "lib.lltm_forward(a, b);",
    'const m = await import("./native/deno.ts");',
  ];
  for (const line of bad) assert(violations("x.ts", line).length > 0, `not caught: ${line}`);
  const good = ['import * as native from "./native/index.ts";', 'import { MAX_DIMS } from "./native/constants.ts";', "native.forward(fn, ins, outs);"];
  for (const line of good) assertEquals(violations("x.ts", line), [], line);
});
