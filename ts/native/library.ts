/**
 * Opens liblltm once, under Bun or Deno, on first use.
 *
 * The path is LLTM_LIBRARY_PATH when set, else lib/ beside this package
 * (where `npm run build` puts it). The CUDA backend, liblltm_cuda, is found by
 * liblltm itself next to its own file.
 */
import { LLTMError, statusName } from "../errors.ts";
import type { NativeLibrary } from "./symbols.ts";

export type { NativeLibrary } from "./symbols.ts";

const ABI_VERSION = 1;

function libraryFileName(): string {
  const platform = runtimePlatform();
  if (platform === "darwin") return "liblltm.dylib";
  if (platform === "windows" || platform === "win32") return "lltm.dll";
  return "liblltm.so";
}

function runtimePlatform(): string {
  const deno = (globalThis as { Deno?: { build: { os: string } } }).Deno;
  if (deno) return deno.build.os;
  return (globalThis as { process?: { platform: string } }).process?.platform ?? "linux";
}

function environment(name: string): string | undefined {
  const deno = (globalThis as { Deno?: { env: { get(n: string): string | undefined } } }).Deno;
  try {
    if (deno) return deno.env.get(name);
    return (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name];
  } catch {
    // Deno without --allow-env for this variable: use the default path.
    return undefined;
  }
}

/** Whether this process runs under Bun (else Deno). */
export const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";

export function defaultLibraryPath(): string {
  const url = new URL(`../../lib/${libraryFileName()}`, import.meta.url);
  return decodeURIComponent(url.pathname.replace(/^\/([A-Za-z]:)/, "$1"));
}

let loaded: NativeLibrary | undefined;

/** Opens the library at `path` (the default or LLTM_LIBRARY_PATH when omitted) and checks its ABI version. */
export async function loadLibrary(path?: string): Promise<NativeLibrary> {
  const override = path === undefined ? environment("LLTM_LIBRARY_PATH") : path;
  path = override || defaultLibraryPath();
  const binding = isBun ? await import("./bun.ts") : await import("./deno.ts");
  let lib: NativeLibrary;
  try {
    lib = binding.open(path);
  } catch (e) {
    const how = override
      ? "LLTM_LIBRARY_PATH points to a missing or unloadable file; unset it or point it at a built liblltm"
      : "build it with `npm run build` (or `bun run build`), or set LLTM_LIBRARY_PATH to a built liblltm";
    throw new Error(`lltm: cannot load the native library at ${path}: ${(e as Error).message}\n${how}`);
  }
  const version = lib.lltm_abi_version();
  if (version !== ABI_VERSION) {
    throw new Error(
      `lltm: ${path} has C ABI version ${version}, but this TypeScript expects ${ABI_VERSION}; rebuild with \`npm run build\``,
    );
  }
  return lib;
}

export async function openNative(): Promise<NativeLibrary> {
  loaded ??= await loadLibrary();
  return loaded;
}

/** The opened library; openNative() must have run (index.ts awaits it). */
export function native(): NativeLibrary {
  if (!loaded) throw new Error("lltm: the native library is not open yet; await openNative() first");
  return loaded;
}

const allocated = new Uint32Array(2);

/** Allocates `bytes` bytes on a device through lltm_alloc; returns the address or throws with the library's message. */
export function allocate(bytes: number, kindCode: number, index: number): number {
  const lib = native();
  const status = lib.lltm_alloc(bytes, kindCode, index, allocated);
  if (status !== 0) throw new LLTMError(statusName(status), lib.lltm_last_error());
  return allocated[0]! + allocated[1]! * 4294967296;
}
