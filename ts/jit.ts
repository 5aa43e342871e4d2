/**
 * The just-in-time build, as the tutorial's torch.utils.cpp_extension.load():
 * `await load({ verbose })` hashes the native sources, the toolchain and the
 * build flags; builds with CMake (Ninja when present) into a cache folder only
 * when something changed, incrementally (the build folder is kept, so one
 * changed file rebuilds only what depends on it); then makes the result the
 * library this process uses.
 *
 * Nothing is built when the library in use already has what is asked (the
 * prebuilt package, on a CPU-only machine or with its CUDA backend), and the
 * installed prebuilt CUDA package is taken before building one. The process
 * switches to the library load() built or found as long as no tensor was
 * made (tensors' memory belongs to the library that allocated it); after
 * that, load() refuses before building, and says what to do.
 *
 * The CUDA backend is built only when asked for (`cuda: true`) or when a GPU
 * is present and nvcc is found; a build prints one line per step, so that a
 * minute's compile is not a minute of silence.
 *
 * The cache is LLTM_CACHE_DIR, else $XDG_CACHE_HOME/lltm, else ~/.cache/lltm.
 * Processes building at once take turns through a lock that names its owner
 * (ts/build_lock.ts), taken over with a message when the owner is gone; the
 * up-to-date stamp is written by an atomic rename, after the build; a cached
 * library that is not complete (ts/native/library_file.ts) is rebuilt.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, relative } from "node:path";

import { acquireLock } from "./build_lock.ts";
import { LLTMError, permissionError } from "./errors.ts";
import { gpuDevicePresent, gpuPresent } from "./gpu.ts";
import {
  cudaDeviceCount, environment, hasCudaPlugin, libraryFile, libraryFilesProblem, libraryInUse, prebuiltCudaLibrary,
  prebuiltPackages, useLibrary,
} from "./native/index.ts";
import { tensorMemoryMade } from "./storage.ts";

export interface LoadOptions {
  /** Print each step, and the build's own output. */
  verbose?: boolean;
  /** Print the build's progress, one line per compiled file (default true; the build takes about a minute). */
  progress?: boolean;
  /** Where builds are cached (default: LLTM_CACHE_DIR, $XDG_CACHE_HOME/lltm or ~/.cache/lltm). */
  cacheDir?: string;
  /**
   * Build the CUDA backend: true or "on"; false or "off"; "auto" (the
   * default): when this machine has an NVIDIA GPU and nvcc is found.
   */
  cuda?: boolean | "auto" | "on" | "off";
  buildType?: "Release" | "Debug";
  /** The project folder holding CMakeLists.txt, csrc/ and cuda/ (default: this package). */
  sourceDir?: string;
  /**
   * Make the result the library this process uses (default true). false only
   * builds, even when the library in use already has what is asked.
   */
  use?: boolean;
}

export interface LoadResult {
  /** The library that was built, found up to date, or already in use with what was asked. */
  path: string;
  /** Whether this call ran the build. */
  rebuilt: boolean;
  /** Whether the process now uses this library (false with `use: false`). */
  inUse: boolean;
  /** The build folder ("" when nothing needed building). */
  buildDir: string;
  /** The build tool's output, when it ran. */
  log: string;
}

const SOURCE_ROOTS = ["CMakeLists.txt", "cmake", "csrc", "cuda"];

export async function load(options: LoadOptions = {}): Promise<LoadResult> {
  try {
    return await build(options);
  } catch (e) {
    throw permissionError(e, "load()") ?? e;
  }
}

async function build(options: LoadOptions): Promise<LoadResult> {
  const say = (message: string) => {
    if (options.verbose) console.log(`lltm: ${message}`);
  };
  // What the caller must hear even when not verbose: a lock taken over, a wait, a broken build redone.
  const warn = (message: string) => console.warn(`lltm: ${message}`);
  const cuda = cudaSetting(options.cuda ?? "auto");
  if (options.use !== false) {
    const ready = readyLibrary(cuda, say);
    if (ready !== undefined) return ready;
  }
  const { sourceDir, cacheDir, buildType, ninja, buildDir, sources, stamp, library } = folderOf(options, cuda);
  say(`sources ${sources.slice(0, 12)}, build folder ${buildDir}, CUDA ${cuda}`);
  const progress = (line: string) => {
    if (options.verbose) console.log(line);
    else if (options.progress !== false && /^\[\s*\d+(\/\d+|%)\]/.test(line)) console.error(`lltm: ${line}`);
  };

  // Why the cached build cannot be used as it is, or undefined when it can. A library that is there but
  // incomplete (a link that was killed, a disk that filled) would pass dlopen and kill the process with SIGBUS.
  const stale = (): string | undefined => {
    if (!existsSync(library)) return "not built yet";
    if (!existsSync(stamp) || readFileSync(stamp, "utf8") !== sources) return "the sources changed";
    const problem = libraryFilesProblem(library);
    return problem === undefined ? undefined : `the built library is incomplete (${problem})`;
  };
  let rebuilt = false, log = "";
  const before = await writable(cacheDir, stale);
  if (before === undefined) {
    say("up to date; nothing to build");
  } else {
    say(before);
    const unlock = await writable(cacheDir, () => {
      mkdirSync(buildDir, { recursive: true });
      return acquireLock(join(buildDir, ".lock"), { say: warn });
    });
    try {
      const reason = await writable(cacheDir, stale);
      if (reason === undefined) {
        say("built meanwhile by another process");
      } else {
        if (reason.startsWith("the built library is incomplete")) {
          warn(`${reason}; rebuilding it`);
          // The build tool would take a truncated output for an up-to-date one, so it goes first.
          for (const f of readdirSync(join(buildDir, "lib"))) rmSync(join(buildDir, "lib", f), { recursive: true, force: true });
          rmSync(stamp, { force: true });
        }
        if (options.progress !== false && !options.verbose) {
          console.error(`lltm: building the native library (CPU${cuda === "ON" ? " and CUDA" : ""}) into ${buildDir}`);
        }
        const run = async (args: string[]) => {
          say(`$ cmake ${args.join(" ")}`);
          const r = await runStreaming("cmake", args, progress);
          log += r.output;
          if (r.error) throw new LLTMError("INTERNAL", `load: cmake could not run (${r.error}); install CMake >= 3.24`);
          if (r.status !== 0) {
            const how = r.signal ? `killed by ${r.signal}` : `exit status ${r.status}`;
            throw new LLTMError("INTERNAL", `load: the build failed (cmake ${args[0]}, ${how}):\n${r.output}`);
          }
        };
        if (!existsSync(join(buildDir, "CMakeCache.txt"))) {
          await run(["-S", sourceDir, "-B", buildDir, ...(ninja ? ["-G", "Ninja"] : []), `-DCMAKE_BUILD_TYPE=${buildType}`,
            `-DLLTM_CUDA=${cuda}`, `-DLLTM_OUTPUT_DIR=${join(buildDir, "lib")}`]);
        }
        await run(["--build", buildDir, "--parallel"]);
        const problem = libraryFilesProblem(library);
        if (problem !== undefined) throw new LLTMError("INTERNAL", `load: the build produced no complete library: ${problem}`);
        await writable(cacheDir, () => {
          const temporary = `${stamp}.${process.pid}`;
          writeFileSync(temporary, sources);
          renameSync(temporary, stamp);
        });
        rebuilt = true;
        say("built");
      }
    } finally {
      unlock();
    }
  }
  const inUse = options.use === false ? false : switchTo(library);
  if (inUse) say(`loaded ${library}`);
  return { path: library, rebuilt, inUse, buildDir, log };
}

/**
 * What load() returns without building: the library in use when it already
 * has what is asked (the CPU always; with `cuda` ON, a CUDA backend that can
 * run where the driver lists a GPU), or
 * else the installed prebuilt CUDA package, which it switches to. Undefined
 * when a build is needed, after making sure that the process can switch to its
 * result: no tensor may hold memory of the library in use.
 */
function readyLibrary(cuda: "ON" | "OFF", say: (message: string) => void): LoadResult | undefined {
  const current = libraryInUse();
  const ready = (path: string): LoadResult => ({ path, rebuilt: false, inUse: true, buildDir: "", log: "" });
  // A CUDA backend that sees no GPU where the driver lists one (a driver too old for it) is rebuilt from source.
  const usable = (path: string) => hasCudaPlugin(path) && (!gpuDevicePresent() || cudaDeviceCount() > 0);
  if (current !== undefined && (cuda === "OFF" || usable(current))) {
    say(`the library in use, ${current}, has what is asked (CPU${cuda === "ON" ? " and CUDA" : ""}); nothing to build`);
    return ready(current);
  }
  if (current !== undefined && tensorMemoryMade()) throw cannotSwitch(current);
  const prebuilt = prebuiltCudaLibrary();
  if (cuda === "ON" && prebuilt !== undefined) {
    switchTo(prebuilt);
    say(`loaded the prebuilt CUDA library ${prebuilt}`);
    return ready(prebuilt);
  }
  return undefined;
}

/** ON or OFF: "auto" builds CUDA only where a GPU and nvcc both are. */
function cudaSetting(setting: NonNullable<LoadOptions["cuda"]>): "ON" | "OFF" {
  if (setting === true || setting === "on") return "ON";
  if (setting === false || setting === "off") return "OFF";
  if (setting !== "auto") {
    throw new LLTMError("INVALID_ARGUMENT", `load: 'cuda' must be true, false, "auto", "on" or "off", got ${JSON.stringify(setting)}`);
  }
  return gpuPresent() && spawnSync("nvcc", ["--version"]).status === 0 ? "ON" : "OFF";
}

/** Runs a command, handing each line of its output to `onLine` as it comes. */
function runStreaming(
  command: string, args: string[], onLine: (line: string) => void,
): Promise<{ output: string; status: number | null; signal: string | null; error?: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "", pending = "";
    const take = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output += text;
      pending += text;
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) onLine(line);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("error", (e) => resolve({ output, status: null, signal: null, error: e.message }));
    child.on("close", (status, signal) => {
      if (pending) onLine(pending);
      resolve({ output, status, signal });
    });
  });
}

/**
 * Where load(options) builds and keeps its library: the build folder in the
 * cache (one per toolchain and flags), the library and the up-to-date stamp
 * in it, and the hash of the sources that the stamp of a current build holds.
 */
export interface BuildFolder {
  sourceDir: string;
  cacheDir: string;
  buildType: "Release" | "Debug";
  ninja: boolean;
  buildDir: string;
  library: string;
  stamp: string;
  sources: string;
}

export function buildFolder(options: LoadOptions = {}): BuildFolder {
  return folderOf(options, cudaSetting(options.cuda ?? "auto"));
}

function folderOf(options: LoadOptions, cuda: string): BuildFolder {
  const sourceDir = options.sourceDir ?? decodeURIComponent(new URL("..", import.meta.url).pathname);
  const cacheDir = options.cacheDir ?? environment("LLTM_CACHE_DIR") ??
    join(environment("XDG_CACHE_HOME") ?? join(homedir(), ".cache"), "lltm");
  const buildType = options.buildType ?? "Release";
  const ninja = spawnSync("ninja", ["--version"]).status === 0;
  const toolchain = [tool("cmake", "--version"), tool(environment("CXX") ?? "c++", "--version"),
    cuda === "OFF" ? "" : tool("nvcc", "--version")].join("\n");
  const flags = `${buildType} LLTM_CUDA=${cuda} ninja=${ninja} ${sourceDir}`;
  const buildDir = join(cacheDir, `build-${sha256(toolchain + flags).slice(0, 16)}`);
  return {
    sourceDir, cacheDir, buildType, ninja, buildDir, library: join(buildDir, "lib", libraryFile), stamp: join(buildDir, "stamp"),
    sources: sourceHash(sourceDir),
  };
}

function sha256(text: string | Uint8Array): string {
  return createHash("sha256").update(text).digest("hex");
}

function tool(command: string, flag: string): string {
  const r = spawnSync(command, [flag], { encoding: "utf8" });
  return r.status === 0 ? `${command}: ${r.stdout.split("\n")[0]}` : `${command}: none`;
}

/** Hash of every native source's path and contents. */
function sourceHash(root: string): string {
  const files: string[] = [];
  const walk = (path: string) => {
    if (!existsSync(path)) return;
    if (statSync(path).isDirectory()) for (const name of readdirSync(path).sort()) walk(join(path, name));
    else files.push(path);
  };
  for (const entry of SOURCE_ROOTS) walk(join(root, entry));
  const hash = createHash("sha256");
  for (const f of files) hash.update(relative(root, f)).update("\0").update(readFileSync(f)).update("\0");
  return hash.digest("hex");
}

/** Runs `action` on the cache, turning a refusal to write there into an LLTMError that says what to do. */
async function writable<T>(cacheDir: string, action: () => T | Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (e) {
    const code = (e as { code?: string }).code, name = (e as Error).name;
    const denied = name === "NotCapable" || name === "PermissionDenied";
    if (code === "EACCES" || code === "EPERM" || code === "EROFS" || code === "ENOTDIR" || code === "ENOSPC" || denied) {
      throw new LLTMError(
        "IO",
        `load: cannot write the build cache ${cacheDir} (${code ?? name}: ${(e as Error).message}); ` +
          "set LLTM_CACHE_DIR (or load's cacheDir option) to a writable folder" +
          (denied ? " that Deno may read and write (--allow-read, --allow-write)" : ""),
      );
    }
    throw e;
  }
}

/** Makes `path` the library in use; tensors made meanwhile (while load() was building) keep the library that has them. */
function switchTo(path: string): boolean {
  const current = libraryInUse();
  if (current !== undefined && current !== path && tensorMemoryMade()) throw cannotSwitch(current, path);
  return useLibrary(path, { replace: true });
}

function cannotSwitch(current: string, built?: string): LLTMError {
  return new LLTMError(
    "BACKEND_UNAVAILABLE",
    `load: the lltm library in use, ${current}, has no CUDA backend that runs here, and this process cannot switch to one` +
      `${built ? ` (${built})` : ""}: tensors were already made, and their memory belongs to the library in use. ` +
      "Call `await load({ cuda: true })` before making any tensor, or install " +
      `${prebuiltPackages?.cuda ?? "a prebuilt CUDA package"} beside lltm, or set LLTM_LIBRARY_PATH to a liblltm built ` +
      "with CUDA (`await load({ cuda: true, use: false })` builds one and returns its path) and restart the process",
  );
}
