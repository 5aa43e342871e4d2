/**
 * Whether a file is a complete shared library for this platform, checked
 * before dlopen maps it: the loader maps a library's segments as they are
 * declared, so a truncated file (a build killed while linking, a partial
 * copy) passes dlopen and the process dies with SIGBUS on the first access
 * past its end. The checks read only headers and tables: ELF (class, byte
 * order, type, machine; program and section header tables, every loaded
 * segment and every section with contents inside the file), Mach-O (magic,
 * CPU, load commands and segments inside the file) and PE (signature,
 * machine, sections inside the file).
 */
import { closeSync, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { dirname, join } from "node:path";

import { LLTMError } from "../errors.ts";

type Arch = "x64" | "arm64";

/** This process's platform and architecture, in Node's words, from the runtime's own global. */
function host(): { os: string; arch: string } {
  const deno = (globalThis as { Deno?: { build: { os: string; arch: string } } }).Deno;
  if (deno) return { os: deno.build.os, arch: deno.build.arch === "x86_64" ? "x64" : deno.build.arch === "aarch64" ? "arm64" : deno.build.arch };
  const p = (globalThis as { process?: { platform: string; arch: string } }).process;
  return { os: p?.platform ?? "linux", arch: p?.arch ?? "x64" };
}

const elfMachine: Record<Arch, number> = { x64: 62, arm64: 183 };
const machoCpu: Record<Arch, number> = { x64: 0x01000007, arm64: 0x0100000c };
const peMachine: Record<Arch, number> = { x64: 0x8664, arm64: 0xaa64 };

/** Reads ranges of an open file; a range past the end reads as undefined. */
class FileReader {
  readonly fd: number;
  readonly size: number;

  constructor(fd: number, size: number) {
    this.fd = fd;
    this.size = size;
  }

  bytes(offset: bigint | number, length: number): DataView | undefined {
    const at = BigInt(offset);
    if (at < 0n || at + BigInt(length) > BigInt(this.size)) return undefined;
    const buffer = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const n = readSync(this.fd, buffer, done, length - done, Number(at) + done);
      if (n === 0) return undefined;
      done += n;
    }
    return new DataView(buffer.buffer);
  }

  within(offset: bigint, length: bigint): boolean {
    return offset >= 0n && length >= 0n && offset + length <= BigInt(this.size);
  }
}

/**
 * Why `path` is not a complete shared library for this platform, or undefined when it is.
 * `platform` and `arch` default to this process's (Node's names: linux, darwin, win32; x64, arm64).
 */
export function libraryFileProblem(path: string, platform?: string, arch?: string): string | undefined {
  const h = host();
  const os = platform ?? h.os;
  const cpu = (arch ?? h.arch) as Arch;
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    return `it cannot be read (${(e as { code?: string }).code ?? (e as Error).message})`;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return "it is not a regular file";
    const file = new FileReader(fd, stat.size);
    if (elfMachine[cpu] === undefined) return undefined; // an architecture these checks do not know: dlopen decides
    if (os === "darwin") return machOProblem(file, cpu);
    if (os === "windows" || os === "win32") return peProblem(file, cpu);
    return elfProblem(file, cpu);
  } finally {
    closeSync(fd);
  }
}

/**
 * Why `path`, or the CUDA plug-in beside it when there is one (liblltm opens it), is not a complete library for
 * this platform; undefined when both are.
 */
export function libraryFilesProblem(path: string): string | undefined {
  const plugin = join(dirname(path), cudaPluginFile(host().os));
  const problem = libraryFileProblem(path);
  if (problem !== undefined) return `${path}: ${problem}`;
  if (!existsSync(plugin)) return undefined;
  const pluginProblem = libraryFileProblem(plugin);
  return pluginProblem === undefined ? undefined : `${plugin}: ${pluginProblem}`;
}

/**
 * Throws an LLTMError (LIBRARY_INVALID) saying what is wrong and what to do unless `path` and its CUDA plug-in
 * are complete libraries. A file that cannot be opened is left to dlopen, which names the reason.
 */
export function checkLibraryFile(path: string, remedy: string): void {
  let problem: string | undefined;
  try {
    if (!existsSync(path)) return;
    problem = libraryFilesProblem(path);
  } catch (e) {
    // A runtime that may not read the file (Deno without --allow-read) leaves the check to dlopen.
    if ((e as Error).name === "NotCapable" || (e as Error).name === "PermissionDenied") return;
    throw e;
  }
  if (problem !== undefined && !problem.includes(": it cannot be read")) {
    throw new LLTMError("LIBRARY_INVALID", `lltm: not a complete native library for this platform: ${problem}\n${remedy}`);
  }
}

/** Whether `path` is there; false also where it cannot be looked at (Deno without --allow-read). */
export function fileExists(path: string): boolean {
  try {
    return existsSync(path);
  } catch {
    return false;
  }
}

/** Whether the liblltm at `path` has the CUDA plug-in beside it, where it loads it from. */
export function hasCudaPlugin(path: string): boolean {
  return fileExists(join(dirname(path), cudaPluginFile(host().os)));
}

function cudaPluginFile(os: string): string {
  if (os === "darwin") return "liblltm_cuda.dylib";
  if (os === "windows" || os === "win32") return "lltm_cuda.dll";
  return "liblltm_cuda.so";
}

function elfProblem(file: FileReader, arch: Arch): string | undefined {
  const head = file.bytes(0, 64);
  if (!head) return `${file.size} bytes, shorter than an ELF header`;
  if (head.getUint32(0, false) !== 0x7f454c46) return "no ELF magic number (not a shared library, or not one for this platform)";
  if (head.getUint8(4) !== 2) return "not a 64-bit ELF file";
  if (head.getUint8(5) !== 1) return "not a little-endian ELF file";
  if (head.getUint16(16, true) !== 3) return "not a shared object (ELF type " + head.getUint16(16, true) + ")";
  const machine = head.getUint16(18, true);
  if (machine !== elfMachine[arch]) return `built for ELF machine ${machine}, this process runs on ${arch} (machine ${elfMachine[arch]})`;
  const phoff = head.getBigUint64(32, true), shoff = head.getBigUint64(40, true);
  const phentsize = head.getUint16(54, true), phnum = head.getUint16(56, true);
  const shentsize = head.getUint16(58, true);
  let shnum = BigInt(head.getUint16(60, true));
  if (phentsize !== 56 || phnum === 0) return "no program headers";
  if (!file.within(phoff, BigInt(phnum * phentsize))) return `truncated: the program headers end past the file's ${file.size} bytes`;
  const ph = file.bytes(phoff, phnum * phentsize)!;
  let loads = 0, dynamic = false;
  for (let i = 0; i < phnum; i++) {
    const type = ph.getUint32(i * 56, true);
    const offset = ph.getBigUint64(i * 56 + 8, true), size = ph.getBigUint64(i * 56 + 32, true);
    if (type === 2) dynamic = true;
    if (type !== 1) continue;
    loads++;
    if (!file.within(offset, size)) {
      return `truncated: loaded segment ${i} (bytes ${offset} to ${offset + size}) ends past the file's ${file.size} bytes`;
    }
  }
  if (loads === 0 || !dynamic) return "no loadable segments or no dynamic section";
  if (shoff === 0n) return undefined; // a stripped section table is allowed
  if (shentsize !== 64) return "a section header size other than 64 bytes";
  if (shnum === 0n) {
    // More than 0xff00 sections: the count is in the first section header's size field.
    const first = file.bytes(shoff, 64);
    if (!first) return `truncated: the section headers start past the file's ${file.size} bytes`;
    shnum = first.getBigUint64(32, true);
  }
  if (!file.within(shoff, shnum * 64n)) return `truncated: the section headers end past the file's ${file.size} bytes`;
  const sh = file.bytes(shoff, Number(shnum) * 64)!;
  for (let i = 0; i < Number(shnum); i++) {
    const type = sh.getUint32(i * 64 + 4, true);
    const offset = sh.getBigUint64(i * 64 + 24, true), size = sh.getBigUint64(i * 64 + 32, true);
    if (type === 0 || type === 8) continue; // SHT_NULL and SHT_NOBITS hold no bytes in the file
    if (!file.within(offset, size)) return `truncated: section ${i} (bytes ${offset} to ${offset + size}) ends past the file's ${file.size} bytes`;
  }
  return undefined;
}

function machOProblem(file: FileReader, arch: Arch): string | undefined {
  const head = file.bytes(0, 32);
  if (!head) return `${file.size} bytes, shorter than a Mach-O header`;
  const magic = head.getUint32(0, false);
  if (magic === 0xcafebabe || magic === 0xcafebabf) return fatProblem(file, arch, magic === 0xcafebabf);
  if (head.getUint32(0, true) !== 0xfeedfacf) return "no 64-bit Mach-O magic number (not a library for this platform)";
  return thinProblem(file, arch, 0n, BigInt(file.size));
}

function fatProblem(file: FileReader, arch: Arch, wide: boolean): string | undefined {
  const count = file.bytes(4, 4)!.getUint32(0, false);
  const entry = wide ? 32 : 20;
  const table = file.bytes(8, count * entry);
  if (!table) return `truncated: the universal binary's table ends past the file's ${file.size} bytes`;
  for (let i = 0; i < count; i++) {
    if (table.getUint32(i * entry, false) !== machoCpu[arch]) continue;
    const offset = wide ? table.getBigUint64(i * entry + 8, false) : BigInt(table.getUint32(i * entry + 8, false));
    const size = wide ? table.getBigUint64(i * entry + 16, false) : BigInt(table.getUint32(i * entry + 12, false));
    if (!file.within(offset, size)) return `truncated: the ${arch} slice ends past the file's ${file.size} bytes`;
    return thinProblem(file, arch, offset, size);
  }
  return `the universal binary has no ${arch} slice`;
}

function thinProblem(file: FileReader, arch: Arch, base: bigint, length: bigint): string | undefined {
  const head = file.bytes(base, 32);
  if (!head || head.getUint32(0, true) !== 0xfeedfacf) return "no 64-bit Mach-O magic number";
  if (head.getUint32(4, true) !== machoCpu[arch]) return `built for CPU type ${head.getUint32(4, true)}, not ${arch}`;
  const ncmds = head.getUint32(16, true), sizeofcmds = head.getUint32(20, true);
  if (32n + BigInt(sizeofcmds) > length) return "truncated: the load commands end past the file";
  const cmds = file.bytes(base + 32n, sizeofcmds)!;
  for (let i = 0, at = 0; i < ncmds; i++) {
    if (at + 8 > sizeofcmds) return "a load command runs past the load commands' size";
    const cmd = cmds.getUint32(at, true), size = cmds.getUint32(at + 4, true);
    if (size < 8 || at + size > sizeofcmds) return "a load command runs past the load commands' size";
    if (cmd === 0x19 && size >= 72) {
      const fileoff = cmds.getBigUint64(at + 40, true), filesize = cmds.getBigUint64(at + 48, true);
      if (fileoff + filesize > length) return `truncated: segment ${i} ends past the file's end`;
    }
    at += size;
  }
  return undefined;
}

function peProblem(file: FileReader, arch: Arch): string | undefined {
  const dos = file.bytes(0, 64);
  if (!dos || dos.getUint16(0, true) !== 0x5a4d) return "no MZ signature (not a DLL)";
  const pe = BigInt(dos.getUint32(60, true));
  const coff = file.bytes(pe, 24);
  if (!coff || coff.getUint32(0, true) !== 0x00004550) return "no PE signature (truncated, or not a DLL)";
  const machine = coff.getUint16(4, true);
  if (machine !== peMachine[arch]) return `built for PE machine 0x${machine.toString(16)}, not ${arch}`;
  const sections = coff.getUint16(6, true), optional = coff.getUint16(20, true);
  const table = file.bytes(pe + 24n + BigInt(optional), sections * 40);
  if (!table) return `truncated: the section table ends past the file's ${file.size} bytes`;
  for (let i = 0; i < sections; i++) {
    const size = BigInt(table.getUint32(i * 40 + 16, true)), offset = BigInt(table.getUint32(i * 40 + 20, true));
    if (size > 0n && !file.within(offset, size)) return `truncated: section ${i} ends past the file's ${file.size} bytes`;
  }
  return undefined;
}
