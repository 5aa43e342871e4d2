/**
 * Opens liblltm under Bun, Deno or Node.
 *
 * The path is LLTM_LIBRARY_PATH when set, else the prebuilt library of the
 * per-platform packages when one is installed (@lltm/linux-x64-gnu-cuda where
 * a GPU is present, else @lltm/linux-x64-gnu), else lib/
 * beside this package (where `npm run build` puts it); load() (ts/jit.ts)
 * can name a just-built one instead. The library is opened on first use, so that importing the
 * package works before anything is built. The CUDA backend, liblltm_cuda, is
 * found by liblltm itself next to its own file.
 */
import { LLTMError, permissionError } from "../errors.ts";
import { headerConstants, layoutConstants } from "./constants.ts";
import { gpuDevicePresent } from "../gpu.ts";
import { checkLibraryFile, fileExists } from "./library_file.ts";
import type { NativeLibrary } from "./symbols.ts";

export type { NativeLibrary } from "./symbols.ts";

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

/** An environment variable, or undefined where it is unset or (Deno) not permitted. */
export function environment(name: string): string | undefined {
  const deno = (globalThis as { Deno?: { env: { get(n: string): string | undefined } } }).Deno;
  try {
    if (deno) return deno.env.get(name);
    return (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name];
  } catch {
    return undefined;
  }
}

/** The JavaScript runtime of this process, by its own global (Bun and Deno also define `process`). */
export type Runtime = "bun" | "deno" | "node";
export const runtime: Runtime | undefined = (() => {
  const g = globalThis as { Bun?: unknown; Deno?: unknown; process?: { versions?: { node?: string } } };
  if (g.Bun !== undefined) return "bun";
  if (g.Deno !== undefined) return "deno";
  if (g.process?.versions?.node !== undefined) return "node";
  return undefined;
})();

/** Whether this process runs under Bun. */
export const isBun = runtime === "bun";

/** The file name of the library for this platform, e.g. liblltm.so. */
export const libraryFile = libraryFileName();

function toPath(url: URL): string {
  return decodeURIComponent(url.pathname.replace(/^\/([A-Za-z]:)/, "$1"));
}

export function defaultLibraryPath(): string {
  return toPath(new URL(`../../lib/${libraryFile}`, import.meta.url));
}

/**
 * The prebuilt packages for this platform (optional dependencies of lltm):
 * the CPU library's, and, on x86-64, the CUDA one's, a liblltm with
 * liblltm_cuda beside it (where liblltm looks for its backend).
 */
export const prebuiltPackages: { readonly cpu: string; readonly cuda?: string } | undefined = (() => {
  const deno = (globalThis as { Deno?: { build: { arch: string } } }).Deno;
  const arch = deno ? deno.build.arch : (globalThis as { process?: { arch: string } }).process?.arch;
  if (runtimePlatform() !== "linux") return undefined;
  if (arch === "x64" || arch === "x86_64") return { cpu: "@lltm/linux-x64-gnu", cuda: "@lltm/linux-x64-gnu-cuda" };
  if (arch === "arm64" || arch === "aarch64") return { cpu: "@lltm/linux-arm64-gnu" };
  return undefined;
})();

/**
 * Where a prebuilt library may be: in its package, looked for as Node
 * resolves a dependency, in the node_modules folder of this package's folder
 * and of each folder above it (so both npm's flat and pnpm's nested layouts).
 */
export function prebuiltLibraryPaths(kind: "cpu" | "cuda" = "cpu"): string[] {
  const name = prebuiltPackages?.[kind];
  const paths: string[] = [];
  if (name === undefined) return paths;
  for (let dir = new URL("../../", import.meta.url); ; dir = new URL("../", dir)) {
    if (!dir.pathname.endsWith("/node_modules/")) paths.push(toPath(new URL(`node_modules/${name}/${libraryFile}`, dir)));
    if (dir.pathname === "/" || new URL("../", dir).pathname === dir.pathname) return paths;
  }
}

/** The installed prebuilt CUDA package's liblltm, if there is one (whether or not this machine has a GPU). */
export function prebuiltCudaLibrary(): string | undefined {
  return prebuiltLibraryPaths("cuda").find((path) => fileExists(path));
}

/**
 * The prebuilt library when one is installed and loads here (the CUDA
 * package's first where a GPU is present), else lib/. A prebuilt one that is
 * present but does not load (e.g. an older glibc) is named in the error when
 * lib/ fails too.
 */
function openDefault(): NativeLibrary {
  const unusable: string[] = [];
  // The CUDA package only where a GPU can run it: its liblltm is the CPU one's build with the backend beside it.
  const candidates = [
    ...(gpuDevicePresent() ? prebuiltLibraryPaths("cuda").map((path) => [path, prebuiltPackages!.cuda!] as const) : []),
    ...prebuiltLibraryPaths("cpu").map((path) => [path, prebuiltPackages!.cpu] as const),
  ];
  for (const [path, pkg] of binding ? candidates : []) {
    try {
      checkLibraryFile(path, `reinstall ${pkg}, or set LLTM_LIBRARY_PATH to a built liblltm`);
    } catch (e) {
      if (e instanceof LLTMError) {
        unusable.push(e.message);
        continue;
      }
      // A runtime that may not look at the file (Deno without --allow-read) leaves the check to dlopen.
    }
    let lib: NativeLibrary;
    try {
      lib = binding!.open(path);
    } catch (e) {
      // This runtime cannot open any library (an old Node): no other path will do.
      if (e instanceof LLTMError) throw e;
      // Not permitted here (Deno's --allow-ffi scoped elsewhere): lib/ says which permission is missing, if any.
      if (permissionError(e, path)) continue;
      const message = (e as Error).message;
      if (!/no such file/i.test(message)) unusable.push(`${path}: ${message}`);
      continue;
    }
    verifyConstants(lib, path);
    return lib;
  }
  try {
    return open(defaultLibraryPath(), false);
  } catch (e) {
    if (unusable.length === 0 || !(e instanceof LLTMError)) throw e;
    throw new LLTMError(e.code, `${e.message}\nThe prebuilt library did not load either: ${unusable.join("; ")}`);
  }
}

type Binding = { open(path: string): NativeLibrary };
let binding: Binding | undefined;
let loaded: NativeLibrary | undefined;

/** Imports this runtime's FFI binding (index.ts awaits it once). */
export async function prepareBinding(): Promise<void> {
  if (binding) return;
  if (runtime === "bun") binding = await import("./bun.ts");
  else if (runtime === "deno") binding = await import("./deno.ts");
  else if (runtime === "node") binding = await import("./node.ts");
  else {
    const g = globalThis as { navigator?: { userAgent?: string } };
    binding = {
      open() {
        throw new LLTMError(
          "LIBRARY_UNAVAILABLE",
          `lltm runs under Bun, Deno or Node >= 26; this runtime (${g.navigator?.userAgent ?? "unknown"}) is none of them`,
        );
      },
    };
  }
}

function open(path: string, fromOverride: boolean): NativeLibrary {
  if (!binding) {
    throw new LLTMError("LIBRARY_UNAVAILABLE", "lltm: the FFI binding is not ready; import lltm from its index module");
  }
  // dlopen maps a truncated file and the process dies of SIGBUS on first use, so the file is checked first.
  checkLibraryFile(path, fromOverride ? "point LLTM_LIBRARY_PATH at a complete liblltm, or unset it" : "rebuild it: `npm run build`, or `await load()`");
  let lib: NativeLibrary;
  try {
    lib = binding.open(path);
  } catch (e) {
    if (e instanceof LLTMError) throw e;
    const denied = permissionError(e, `lltm: opening the native library ${path}`);
    if (denied) throw denied;
    // A library that opens but lacks an entry point was built from older sources than this TypeScript.
    const missing = /symbol/i.test((e as Error).message) ? /\b(lltm_[a-z0-9_]+)\b/.exec((e as Error).message)?.[1] : undefined;
    const how = missing
      ? `it lacks ${missing}, which this version of lltm calls: it was built from older sources; rebuild it (\`npm run build\`) or point LLTM_LIBRARY_PATH at a current one`
      : fromOverride
      ? "LLTM_LIBRARY_PATH points to a missing or unloadable file; unset it or point it at a built liblltm"
      : "build it with `npm run build` (or `bun run build`), call `await load()`, or set LLTM_LIBRARY_PATH to a built liblltm";
    throw new LLTMError("LIBRARY_UNAVAILABLE", `lltm: cannot load the native library at ${path}: ${(e as Error).message}\n${how}`);
  }
  verifyConstants(lib, path);
  return lib;
}

/**
 * Refuses a library built with other constants or another descriptor layout
 * than this TypeScript (ts/native/constants.ts), naming every difference.
 */
function verifyConstants(lib: NativeLibrary, path: string): void {
  const version = lib.lltm_abi_version();
  if (version !== headerConstants.LLTM_ABI_VERSION) {
    throw new LLTMError(
      "ABI_MISMATCH",
      `lltm: ${path} has C ABI version ${version}, but this TypeScript expects ${headerConstants.LLTM_ABI_VERSION}; ` +
        "rebuild it with `npm run build`",
    );
  }
  const value = new BigInt64Array(1);
  const encoder = new TextEncoder();
  const differences: string[] = [];
  for (const [name, expected] of Object.entries({ ...headerConstants, ...layoutConstants })) {
    const status = lib.lltm_abi_constant(encoder.encode(`${name}\0`), value);
    const actual = status === 0 ? Number(value[0]) : "unknown";
    if (actual !== expected) differences.push(`${name} is ${actual} in the library but ${expected} here`);
  }
  if (differences.length > 0) {
    throw new LLTMError(
      "ABI_MISMATCH",
      `lltm: ${path} was built from another csrc/lltm.h than this TypeScript: ${differences.join("; ")}; ` +
        "rebuild it with `npm run build`",
    );
  }
}

/** Opens the library at `path` (the default or LLTM_LIBRARY_PATH when omitted) without making it the one in use. */
export async function loadLibrary(path?: string): Promise<NativeLibrary> {
  await prepareBinding();
  const override = path === undefined ? environment("LLTM_LIBRARY_PATH") : path;
  return override ? open(override, true) : openDefault();
}

/**
 * Makes the library at `path` the one this process uses; true if it now is.
 * With `replace`, a library already in use is replaced (the caller has made
 * sure that no memory of it is held): the new one is opened and checked
 * (checkLibraryFile, verifyConstants), then bound into the same object, so
 * that every holder of it (the call layer keeps it) calls the new library. The
 * old one stays open (liblltm is never unloaded: its pool's threads run its
 * code). Without `replace`, false when another library is already in use.
 */
export function useLibrary(path: string, options: { replace?: boolean } = {}): boolean {
  if (!loaded) {
    loaded = open(path, false);
    return true;
  }
  if (loaded.path === path) return true;
  if (!options.replace) return false;
  Object.assign(loaded, open(path, false));
  return true;
}

/** The path of the library in use, opening the default one if none is yet; undefined when none opens. */
export function libraryInUse(): string | undefined {
  try {
    return native().path;
  } catch {
    return undefined;
  }
}

/** The library in use, opened on first call. */
export function native(): NativeLibrary {
  if (!loaded) {
    const override = environment("LLTM_LIBRARY_PATH");
    loaded = override ? open(override, true) : openDefault();
  }
  return loaded;
}
