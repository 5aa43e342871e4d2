/**
 * One source for the C constants: csrc/lltm.h and csrc/lltm_ops.def.
 * TypeScript's table (ts/native/abi.generated.ts, which scripts/gen-abi.ts
 * writes) must be what a fresh generation gives and hold exactly the
 * header's constants with the header's values, the library must report the
 * same ones, and a library built with other values (a stub compiled here)
 * must be refused at open, naming both values.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { LLTMError, loadLibrary } from "../ts/index.ts";
import { GENERATED, generateAbi } from "../scripts/gen-abi.ts";
import { headerConstants, layoutConstants } from "../ts/native/constants.ts";
import { libraryFile, native } from "../ts/native/library.ts";
import { symbols } from "../ts/native/symbols.ts";
import { assert, assertEquals, test } from "./harness.ts";

const source = (path: string) => readFileSync(fileURLToPath(new URL(`../${path}`, import.meta.url)), "utf8");
const header = source("csrc/lltm.h");
const table = source("csrc/lltm_ops.def");

test("ts/native/abi.generated.ts is what scripts/gen-abi.ts generates from the C declarations", () => {
  assert(source(GENERATED) === generateAbi(), `${GENERATED} is stale: run bun scripts/gen-abi.ts (scripts/build.ts does)`);
});

/**
 * Every `#define LLTM_X <number>` and enumerator `LLTM_X = <number>` of the
 * header, and the enumerators its enums take from the table (LLTM_<dtype>,
 * LLTM_OP_<op>).
 */
function parseHeader(text: string, def: string): Record<string, number> {
  const found: Record<string, number> = {};
  const strip = (t: string) => t.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  const code = strip(text);
  for (const m of code.matchAll(/#define\s+(LLTM_[A-Z0-9_]+)\s+(\d+)u?\s*$/gm)) found[m[1]!] = Number(m[2]);
  for (const m of code.matchAll(/\b(LLTM_[A-Z0-9_]+)\s*=\s*(\d+)u?\b/g)) found[m[1]!] = Number(m[2]);
  for (const m of strip(def).matchAll(/^LLTM_DTYPE\((\w+), (\d+),/gm)) found[`LLTM_${m[1]}`] = Number(m[2]);
  for (const m of strip(def).matchAll(/^LLTM_OP\((\w+), (\d+),/gm)) found[`LLTM_OP_${m[1]}`] = Number(m[2]);
  return found;
}

test("the generated constants are exactly csrc/lltm.h's and lltm_ops.def's, with their values", () => {
  const parsed = parseHeader(header, table);
  assert(Object.keys(parsed).length >= 30, `the header parser found only ${Object.keys(parsed).join(", ")}`);
  assertEquals(sortedEntries(headerConstants), sortedEntries(parsed), "ts/native/abi.generated.ts against csrc/lltm.h");
});

test("the library reports every constant and the descriptor layout as TypeScript has them", () => {
  const lib = native();
  const value = new BigInt64Array(1);
  for (const [name, expected] of Object.entries({ ...headerConstants, ...layoutConstants })) {
    const status = lib.lltm_abi_constant(new TextEncoder().encode(`${name}\0`), value);
    assertEquals(status, 0, `lltm_abi_constant("${name}"): ${lib.lltm_last_error()}`);
    assertEquals(Number(value[0]), expected, name);
  }
  const unknown = lib.lltm_abi_constant(new TextEncoder().encode("LLTM_NO_SUCH\0"), value);
  assertEquals(unknown, headerConstants.LLTM_ERR_INVALID_ARGUMENT);
  assert(/lltm_abi_constant: no constant named 'LLTM_NO_SUCH'/.test(lib.lltm_last_error()), lib.lltm_last_error());
});

function sortedEntries(record: Record<string, number>): [string, number][] {
  return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1));
}

// ---- a deliberately mismatched library ----

const compiler = ["cc", "gcc", "clang"].find((c) => spawnSync(c, ["--version"]).status === 0);

/**
 * Builds a stand-in for liblltm into `dir`: every symbol of the binding's table,
 * with lltm_abi_version and lltm_abi_constant answering TypeScript's values but
 * `changes`, and without the functions named in `omit`.
 */
function buildStub(dir: string, name: string, changes: Record<string, number | undefined>, omit: string[] = []): string {
  const values: Record<string, number | undefined> = { ...headerConstants, ...layoutConstants, ...changes };
  const table = Object.entries(values)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `  {"${k}", ${v}},`)
    .join("\n");
  const functions = Object.keys(symbols)
    .filter((s) => !["lltm_abi_version", "lltm_abi_constant", "lltm_last_error", ...omit].includes(s))
    .map((s) => `int32_t ${s}(void) { return ${headerConstants.LLTM_ERR_INTERNAL}; }`)
    .join("\n");
  const source = `#include <stdint.h>
#include <string.h>
static const struct { const char* name; int64_t value; } table[] = {
${table}
};
uint32_t lltm_abi_version(void) { return ${values.LLTM_ABI_VERSION}; }
const char* lltm_last_error(void) { return "a stub"; }
int32_t lltm_abi_constant(const char* name, int64_t* value) {
  for (unsigned i = 0; i < sizeof table / sizeof table[0]; ++i)
    if (strcmp(table[i].name, name) == 0) { *value = table[i].value; return 0; }
  return ${headerConstants.LLTM_ERR_INVALID_ARGUMENT};
}
${functions}
`;
  const src = join(dir, `${name}.c`), out = join(dir, name, libraryFile);
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(src, source);
  const r = spawnSync(compiler!, ["-shared", "-fPIC", "-o", out, src], { encoding: "utf8" });
  assertEquals(r.status, 0, `${compiler} failed: ${r.stderr}`);
  return out;
}

async function openError(path: string): Promise<LLTMError> {
  try {
    await loadLibrary(path);
  } catch (e) {
    assert(e instanceof LLTMError, `expected an LLTMError, got ${e}`);
    return e;
  }
  throw new Error(`${path} was opened`);
}

test("a library built with other constants or another descriptor layout is refused at open, naming both values", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lltm-abi-"));
  try {
    const cases: [string, Record<string, number | undefined>, RegExp][] = [
      [
        "abi-version", { LLTM_ABI_VERSION: headerConstants.LLTM_ABI_VERSION + 1 },
        new RegExp(`has C ABI version ${headerConstants.LLTM_ABI_VERSION + 1}, but this TypeScript expects ${headerConstants.LLTM_ABI_VERSION}`),
      ],
      ["max-dims", { LLTM_MAX_DIMS: 5 }, /LLTM_MAX_DIMS is 5 in the library but 4 here/],
      ["tensor-size", { "sizeof(lltm_tensor)": 96 }, /sizeof\(lltm_tensor\) is 96 in the library but 88 here/],
      ["strides-offset", { "offsetof(lltm_tensor, strides)": 56 }, /offsetof\(lltm_tensor, strides\) is 56 in the library but 48 here/],
      ["dtype-offset", { "offsetof(lltm_tensor, dtype)": 72 }, /offsetof\(lltm_tensor, dtype\) is 72 in the library but 80 here/],
      ["call-size", { "sizeof(lltm_call)": 1500 }, /sizeof\(lltm_call\) is 1500 in the library but 1496 here/],
      ["dtype-code", { LLTM_BFLOAT16: 3 }, /LLTM_BFLOAT16 is 3 in the library but 2 here/],
      ["op-code", { LLTM_OP_LINEAR: 12 }, /LLTM_OP_LINEAR is 12 in the library but 10 here/],
      ["status", { LLTM_ERR_CUDA: 11 }, /LLTM_ERR_CUDA is 11 in the library but 8 here/],
      ["missing", { LLTM_ACCUMULATE_PARAM_GRADS: undefined }, /LLTM_ACCUMULATE_PARAM_GRADS is unknown in the library but 1 here/],
    ];
    for (const [name, changes, pattern] of cases) {
      const e = await openError(buildStub(dir, name, changes));
      assertEquals(e.code, "ABI_MISMATCH", name);
      assert(pattern.test(e.message), `${name}: ${e.message}`);
    }
    const same = await loadLibrary(buildStub(dir, "same", {}));
    assertEquals(same.lltm_abi_version(), headerConstants.LLTM_ABI_VERSION, "a stub with the same constants opens");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, { skip: !compiler && "the ABI mismatch test needs a C compiler (cc, gcc or clang)" });

test("a library that lacks an entry point of the table (built from older sources) names it and says to rebuild", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lltm-abi-"));
  try {
    const e = await openError(buildStub(dir, "older", {}, ["lltm_buffer_bytes"]));
    assertEquals(e.code, "LIBRARY_UNAVAILABLE");
    assert(/it lacks lltm_buffer_bytes, which this version of lltm calls: it was built from older sources; rebuild it/.test(e.message), e.message);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, { skip: !compiler && "the missing-symbol test needs a C compiler (cc, gcc or clang)" });

test("a library that cannot be opened is an LLTMError with a code", async () => {
  const e = await openError("/nonexistent/liblltm.so");
  assertEquals(e.code, "LIBRARY_UNAVAILABLE");
});
