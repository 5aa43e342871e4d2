/**
 * The CPU kernels of every instruction-set variant this machine can run
 * (LLTM_CPU_KERNELS forces one per process, so each runs in child processes):
 * check.ts's comparisons with the float64 reference at sizes that reach the
 * GEMM's edge tiles and its split of long sums, and isa_probe.ts's of strided
 * views, add_, the optimizers and the sequence engine; all with fixed seeds,
 * so that a failure repeats. Plus the refusals, and a look at the machine code: only the wider
 * variants' own functions may use AVX instructions.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { backendInfo } from "../ts/index.ts";
import { assert, assertEquals, test } from "./harness.ts";

// This processor's variants, widest first (cmake/cpu_isa.cmake); the last runs on any of its kind.
const variants: readonly string[] = process.arch === "arm64" ? ["neon"] : ["avx512", "avx2", "baseline"];
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
const bun = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";
const runtime = deno ? deno.execPath() : process.execPath;
// Node's flags (--experimental-ffi) carry over to its children; its test runner's own do not.
const nodeFlags = process.execArgv.filter((a) => !a.startsWith("--test"));
const native = backendInfo().cpuKernels === "native";
const skip = native ? "CPU kernel variants: this is a -march=native build (LLTM_NATIVE_ARCH)" : false;

function run(args: string[], kernels: string | undefined) {
  const env: Record<string, string | undefined> = { ...process.env, LLTM_CPU_KERNELS: kernels };
  if (kernels === undefined) delete env.LLTM_CPU_KERNELS;
  return spawnSync(runtime, args, { encoding: "utf8", env: env as NodeJS.ProcessEnv });
}

function script(path: string, kernels: string | undefined, extra: string[] = []) {
  return run(deno ? ["run", "--allow-all", path, ...extra] : bun ? [path, ...extra] : [...nodeFlags, path, ...extra], kernels);
}

function probe(kernels: string | undefined): { cpuKernels?: string; error?: string; errors?: Record<string, number>; sequenceBackward?: number } {
  const r = script(here("./isa_probe.ts"), kernels);
  assert(r.status === 0, `isa_probe.ts failed:\n${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!);
}

test("each CPU kernel variant this machine runs matches the reference; the default is the widest", () => {
  const runnable: string[] = [];
  for (const kernels of variants) {
    const p = probe(kernels);
    if (p.error !== undefined) {
      assert(/cannot run: it lacks \w/.test(p.error), `LLTM_CPU_KERNELS=${kernels} refused without naming why: ${p.error}`);
      continue;
    }
    assertEquals(p.cpuKernels, kernels, `LLTM_CPU_KERNELS=${kernels}`);
    runnable.push(kernels);
    // 1x1x1, edge tiles in every direction, full tiles, and (f64) K split into two blocks.
    for (const [b, f, s] of [[1, 1, 1], [37, 19, 45], [16, 32, 128], [3, 1100, 9]]) {
      const r = script(here("../scripts/check.ts"), kernels, ["-b", `${b}`, "-f", `${f}`, "-s", `${s}`]);
      assert(r.status === 0, `LLTM_CPU_KERNELS=${kernels} ${b}x${f}x${s}: check.ts failed:\n${r.stdout}${r.stderr}`);
    }
    for (const [dtype, bound] of [["float32", 1e-5], ["float64", 1e-12]] as const)
      assert(p.errors![dtype]! <= bound, `LLTM_CPU_KERNELS=${kernels} ${dtype}: strided passes, add_, optimizers and sequences: relative error ${p.errors![dtype]} > ${bound}`);
    assert(p.sequenceBackward! <= 1e-6, `LLTM_CPU_KERNELS=${kernels}: sequence gradients vs central differences: ${p.sequenceBackward} > 1e-6`);
  }
  assert(runnable.includes(variants.at(-1)!), `the ${variants.at(-1)} kernels run on every ${process.arch} processor`);
  assertEquals(probe(undefined).cpuKernels, runnable[0], "the default choice");
}, { skip });

test("an unknown LLTM_CPU_KERNELS is refused, naming the variants of this build", () => {
  const p = probe("avx9000");
  assertEquals(p.cpuKernels, undefined);
  assert(p.error!.includes(`LLTM_CPU_KERNELS=avx9000 is not one of this build's CPU kernels: ${variants.join(", ")}`), p.error);
}, { skip });

// Where objects of several variants instantiate the same inline function, the
// linker keeps one copy for all callers (cmake/cpu_isa.cmake orders the
// objects so it is a baseline one); this checks the result.
const objdump = spawnSync("objdump", ["--version"]).status === 0;
test("only the AVX variants' own functions contain AVX instructions, and only avx512's AVX-512 ones", () => {
  const path = backendInfo().path;
  assert(existsSync(path), `${path} exists`);
  const r = spawnSync("objdump", ["-d", "--no-show-raw-insn", "-C", path], { encoding: "utf8", maxBuffer: 1 << 30 });
  assert(r.status === 0, r.stderr);
  const offenders = new Set<string>();
  let fn = "", avx512Uses = 0;
  for (const line of r.stdout.split("\n")) {
    const head = /^[0-9a-f]+ <(.*)>:$/.exec(line);
    if (head) {
      fn = head[1]!;
      continue;
    }
    const insn = /^\s+[0-9a-f]+:\s+(\S+)\s*(.*)$/.exec(line);
    if (!insn) continue;
    const [, mnemonic, withSymbol] = insn as unknown as [string, string, string];
    const operands = withSymbol.replace(/<.*$/, "");
    const avx512 = /^k/.test(mnemonic) || /%zmm|%[xy]mm(1[6-9]|2\d|3[01])\b|%k[1-7]|\{/.test(operands);
    const avx = avx512 || /^v/.test(mnemonic) || /%ymm/.test(operands);
    if (avx512 && fn.includes("::avx512::")) avx512Uses++;
    else if (avx512 || (avx && !fn.includes("::avx2::") && !fn.includes("::avx512::"))) offenders.add(`${mnemonic} in ${fn}`);
  }
  assert(offenders.size === 0, `instructions outside their variant:\n${[...offenders].slice(0, 20).join("\n")}`);
  assert(avx512Uses > 0, "the avx512 kernels use AVX-512 instructions");
}, { skip: skip || (objdump ? false : "objdump is not installed") || (process.arch !== "x64" ? "not x86-64" : false) });

// A processor without AVX-512, or without AVX, emulated by qemu-user (whose
// TCG has AVX2 but no AVX-512): liblltm must choose the variant that machine
// can run, compute what that variant computes on this one, and refuse wider
// ones by the features missing.
const qemu = process.arch === "x64" && spawnSync("qemu-x86_64", ["-version"]).status === 0;
const cc = spawnSync("cc", ["--version"]).status === 0;
const emulatedSkip = skip || (!qemu ? "emulated processors: qemu-user (qemu-x86_64) is not installed" : !cc ? "emulated processors: no C compiler" : false);
test("on emulated processors without AVX-512 or AVX the library chooses avx2 or baseline, computes the same, and refuses wider ones", () => {
  const library = backendInfo().path;
  const dir = mkdtempSync(join(tmpdir(), "lltm-isa-"));
  try {
    const program = join(dir, "isa_emulated");
    const libDir = dirname(library);
    const built = spawnSync("cc", ["-O2", "-I", here("../csrc"), here("./c/isa_emulated.c"), "-o", program, library, `-Wl,-rpath,${libDir}`], { encoding: "utf8" });
    assert(built.status === 0, `cc failed:\n${built.stderr}`);
    const exec = (args: string[], kernels?: string) => {
      const env: Record<string, string | undefined> = { ...process.env, LLTM_CPU_KERNELS: kernels ?? "" };
      const r = spawnSync(args[0]!, args.slice(1), { encoding: "utf8", env: env as NodeJS.ProcessEnv, maxBuffer: 1 << 28 });
      assert(r.status === 0, `${args.join(" ")} failed:\n${r.stdout.slice(0, 2000)}${r.stderr}`);
      return r.stdout.trim().split("\n");
    };
    for (const [cpu, expected] of [["qemu64", "baseline"], ["max", "avx2"]] as const) {
      const emulated = exec(["qemu-x86_64", "-cpu", cpu, program]);
      assertEquals(emulated[0], `kernels ${expected}`, `qemu -cpu ${cpu}`);
      const host = exec([program], expected);
      assertEquals(host[0], `kernels ${expected}`);
      assertEquals(emulated.length, host.length, `qemu -cpu ${cpu}: as many values as on this machine`);
      for (const [dtype, bound] of [["0", 1e-5], ["1", 1e-12]] as const) {
        let diff = 0, norm = 0;
        for (let i = 1; i < host.length; i++) {
          const [d, a] = emulated[i]!.split(" "), [, b] = host[i]!.split(" ");
          if (d !== dtype) continue;
          diff += (Number(a) - Number(b)) ** 2;
          norm += Number(b) ** 2;
        }
        assert(Math.sqrt(diff / norm) <= bound, `qemu -cpu ${cpu} dtype ${dtype}: relative difference ${Math.sqrt(diff / norm)}`);
      }
    }
    const refusedAvx2 = exec(["qemu-x86_64", "-cpu", "qemu64", program], "avx2")[0]!;
    assert(/^refused .*LLTM_CPU_KERNELS=avx2 .* it lacks avx, avx2, fma, f16c, .*; it can run baseline/.test(refusedAvx2), refusedAvx2);
    const refusedAvx512 = exec(["qemu-x86_64", "-cpu", "max", program], "avx512")[0]!;
    assert(/^refused .*it lacks avx512f.*; it can run avx2, baseline/.test(refusedAvx512), refusedAvx512);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, { skip: emulatedSkip });
