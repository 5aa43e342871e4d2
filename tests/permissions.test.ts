/** Under Deno, an operation its permissions refuse is an LLTMError naming the flag that is missing. */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { assertEquals, test } from "./harness.ts";
import { tempDir } from "./temp_dir.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const deno = (globalThis as { Deno?: { execPath(): string } }).Deno?.execPath() ?? join(root, "node_modules", ".bin", "deno");
// A machine given only one runtime (the GPU host gets Bun alone) has no deno to probe with.
const noDeno = spawnSync(deno, ["--version"]).status === 0 ? false : `no runnable deno at ${deno}`;
const dir = tempDir("lltm-permissions-");
const script = join(dir, "probe.ts");
writeFileSync(script, `
import { LLTMLayer, load, Tensor } from ${JSON.stringify(new URL("../ts/index.ts", import.meta.url).href)};
try {
  const what = Deno.args[0];
  if (what === "tensor") Tensor.zeros([2]).toArray();
  if (what === "save") new LLTMLayer(2, 3).save(${JSON.stringify(join(dir, "model.safetensors"))});
  // use: false builds whether or not the library in use has what is asked, so the build's permissions are needed.
  if (what === "load") await load({ cacheDir: ${JSON.stringify(join(dir, "cache"))}, cuda: "off", use: false });
  console.log(JSON.stringify({ code: "none", message: "no error" }));
} catch (e) {
  console.log(JSON.stringify({ code: e.code, message: e.message }));
}
`);

/**
 * Runs deno; under Deno through Deno.Command, since node:child_process there
 * hands a spawned deno the test's own permissions.
 */
function run(args: string[], env: Record<string, string>): string {
  const D = (globalThis as { Deno?: DenoCommand }).Deno;
  if (D) {
    const r = new D.Command(deno, { args, env, clearEnv: true }).outputSync();
    return new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
  }
  const r = spawnSync(deno, args, { encoding: "utf8", env });
  return r.stdout + r.stderr;
}

interface DenoCommand {
  Command: new (command: string, options: { args: string[]; env: Record<string, string>; clearEnv: boolean }) => {
    outputSync(): { stdout: Uint8Array; stderr: Uint8Array };
  };
}

/** The error that `what` raises under `deno run` with `flags`. */
function probe(what: string, flags: string[]): { code: string; message: string } {
  const args = ["run", "--no-config", ...flags, script, what];
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1" };
  const stdout = run(args, env);
  const line = stdout.trim().split("\n").pop() ?? "";
  if (!line.startsWith("{")) throw new Error(`deno ${args.join(" ")}: ${stdout}`);
  return JSON.parse(line);
}

const library = join(root, "lib", "liblltm.so");
const cases: [string, string[], string][] = [
  ["tensor", [], "--allow-ffi"],
  ["tensor", [`--allow-ffi=${library}`], "--allow-ffi"],
  ["save", ["--allow-ffi"], "--allow-(read|write)"],
  ["save", ["--allow-ffi", "--allow-write"], "--allow-read"],
  ["load", ["--allow-ffi", "--allow-read", "--allow-write"], "--allow-(run|env)"],
];
for (const [what, flags, missing] of cases) {
  test(`Deno: ${what} with ${flags.join(" ") || "no permissions"} names ${missing}`, () => {
    const e = probe(what, flags);
    assertEquals(e.code, "PERMISSION_DENIED", e.message);
    if (!new RegExp(`run deno with ${missing}`).test(e.message)) throw new Error(`message names no ${missing}: ${e.message}`);
    if (flags.some((f) => f.startsWith("--allow-ffi=")) && !/unscoped/.test(e.message)) throw new Error(`no word of scope: ${e.message}`);
  }, { skip: noDeno });
}

test("Deno: computing needs --allow-ffi and nothing else", () => {
  const e = probe("tensor", ["--allow-ffi"]);
  assertEquals(e.code, "none", e.message);
}, { skip: noDeno });

test("Deno: saving needs --allow-write and --allow-read", () => {
  const e = probe("save", ["--allow-ffi", "--allow-write", "--allow-read"]);
  assertEquals(e.code, "none", e.message);
}, { skip: noDeno });
