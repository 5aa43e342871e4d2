/**
 * The loader refuses a file that is not a complete library for this platform
 * before dlopen maps it: a truncated liblltm (a killed link, a partial copy)
 * passes dlopen and kills Bun and Deno with SIGBUS on first use.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { backendInfo } from "../ts/index.ts";
import { libraryFileProblem } from "../ts/native/library_file.ts";
import { runChild, testFile } from "./child.ts";
import { assert, assertEquals, test } from "./harness.ts";
import { tempDir } from "./temp_dir.ts";

const scratch = tempDir("lltm-library-file-");

const isLinux = ((globalThis as { Deno?: { build: { os: string } } }).Deno?.build.os ??
  (globalThis as { process?: { platform: string } }).process?.platform) === "linux";

/** Truncation points: inside the ELF header and the program headers, around every loaded segment's end, spread over the file. */
function cuts(file: Uint8Array): number[] {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const points = new Set([0, 1, 4, 16, 52, 63, 64, 65, 100, file.length - 1, file.length - 64, file.length - 4096]);
  const phoff = Number(view.getBigUint64(32, true)), phnum = view.getUint16(56, true);
  const shoff = Number(view.getBigUint64(40, true));
  for (const p of [phoff + 56 * phnum - 1, shoff, shoff + 1, shoff + 64]) points.add(p);
  for (let i = 0; i < phnum; i++) {
    const at = phoff + 56 * i;
    if (view.getUint32(at, true) !== 1) continue;
    const end = Number(view.getBigUint64(at + 8, true) + view.getBigUint64(at + 32, true));
    for (const p of [end - 4096, end - 1, end, end + 1]) points.add(p);
  }
  for (let k = 1; k < 40; k++) points.add(Math.floor((file.length * k) / 40));
  return [...points].filter((p) => p >= 0 && p < file.length).sort((a, b) => a - b);
}

test("truncated copies of liblltm are refused before dlopen, in a child that must not crash", () => {
  const original = backendInfo().path;
  const file = new Uint8Array(readFileSync(original));
  const dir = mkdtempSync(join(scratch, "truncated-"));
  const paths: string[] = [];
  for (const n of cuts(file)) {
    const path = join(dir, `cut-${n}.so`);
    writeFileSync(path, file.subarray(0, n));
    paths.push(path);
  }
  const otherMachine = file.slice();
  new DataView(otherMachine.buffer).setUint16(18, otherMachine[18] === 62 ? 183 : 62, true);
  const thirtyTwo = file.slice();
  thirtyTwo[4] = 1;
  const text = new TextEncoder().encode("this is not a library\n".repeat(10));
  for (const [name, content] of [["machine.so", otherMachine], ["class.so", thirtyTwo], ["text.so", text]] as const) {
    writeFileSync(join(dir, name), content);
    paths.push(join(dir, name));
  }
  const whole = join(dir, "whole.so");
  copyFileSync(original, whole);

  const r = runChild(testFile("open_library_copies.ts"), [...paths, whole]);
  assert(r.status === 0, `the child died (status ${r.status}, signal ${r.signal}): ${r.stderr.slice(-2000)}`);
  const results = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Record<string, string>;
  for (const path of paths) {
    assert(/^LIBRARY_INVALID: lltm: not a complete native library for this platform: \/.*: /.test(results[path] ?? ""), `${path}: ${results[path]}`);
  }
  assertEquals(results[whole], "opened");
  assert(/truncated: (loaded segment|section|the section headers)/.test(results[join(dir, `cut-${file.length - 1}.so`)]!), results[join(dir, `cut-${file.length - 1}.so`)]!);
  assert(/built for ELF machine/.test(results[join(dir, "machine.so")]!), results[join(dir, "machine.so")]!);
}, { skip: isLinux ? false : "the truncated-library test reads ELF files (Linux)" });

/** A minimal Mach-O of one 64-bit segment covering `segment` bytes after the header, for `cpu`. */
function machO(cpu: number, segment: number, size: number): Uint8Array {
  const file = new Uint8Array(size);
  const v = new DataView(file.buffer);
  v.setUint32(0, 0xfeedfacf, true);
  v.setUint32(4, cpu, true);
  v.setUint32(16, 1, true); // one load command
  v.setUint32(20, 72, true);
  v.setUint32(32, 0x19, true); // LC_SEGMENT_64
  v.setUint32(36, 72, true);
  v.setBigUint64(32 + 40, 0n, true);
  v.setBigUint64(32 + 48, BigInt(segment), true);
  return file;
}

/** A minimal PE with one section of `raw` bytes at 512, for `machine`. */
function pe(machine: number, raw: number, size: number): Uint8Array {
  const file = new Uint8Array(size);
  const v = new DataView(file.buffer);
  v.setUint16(0, 0x5a4d, true);
  v.setUint32(60, 64, true);
  v.setUint32(64, 0x00004550, true);
  v.setUint16(68, machine, true);
  v.setUint16(70, 1, true); // one section
  v.setUint16(84, 0, true); // no optional header
  v.setUint32(88 + 16, raw, true);
  v.setUint32(88 + 20, 512, true);
  return file;
}

test("Mach-O and PE files: the magic, the CPU and the sections' ranges are checked", () => {
  const dir = mkdtempSync(join(scratch, "formats-"));
  const check = (name: string, content: Uint8Array, platform: string, arch: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return libraryFileProblem(path, platform, arch);
  };
  assertEquals(check("ok.dylib", machO(0x0100000c, 4096, 4096), "darwin", "arm64"), undefined);
  assert(/truncated: segment 0/.test(check("cut.dylib", machO(0x0100000c, 8192, 4096), "darwin", "arm64") ?? ""), "a cut Mach-O");
  assert(/not arm64/.test(check("x64.dylib", machO(0x01000007, 4096, 4096), "darwin", "arm64") ?? ""), "a Mach-O for another CPU");
  assert(/shorter than a Mach-O header/.test(check("tiny.dylib", new Uint8Array(10), "darwin", "arm64") ?? ""), "a tiny Mach-O");
  assertEquals(check("ok.dll", pe(0x8664, 1024, 1536), "win32", "x64"), undefined);
  assert(/truncated: section 0/.test(check("cut.dll", pe(0x8664, 1024, 1000), "win32", "x64") ?? ""), "a cut PE");
  assert(/not x64/.test(check("arm.dll", pe(0xaa64, 1024, 1536), "win32", "x64") ?? ""), "a PE for another machine");
  assert(/no PE signature/.test(check("mz.dll", pe(0x8664, 1024, 1536).slice(0, 66), "win32", "x64") ?? ""), "a cut PE header");
  assert(/cannot be read \(ENOENT\)/.test(libraryFileProblem(join(dir, "missing.so")) ?? ""), "a missing file");
});

test("under Deno with --allow-ffi alone (no --allow-read), the library still opens, unchecked", () => {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno!;
  const r = spawnSync(deno.execPath(), ["run", "--allow-ffi", testFile("open_default.ts")], { encoding: "utf8" });
  assert(r.status === 0 && /^\d+$/.test(r.stdout.trim()), `status ${r.status}: ${r.stdout} ${r.stderr.slice(-1500)}`);
}, { skip: typeof (globalThis as { Deno?: unknown }).Deno === "undefined" ? "a Deno permission test" : false });
