/**
 * The just-in-time build, as the tutorial's torch.utils.cpp_extension.load():
 * `await load({ verbose })` hashes the native sources, the toolchain and the
 * build flags; builds with CMake (Ninja when present) into a cache folder only
 * when something changed, incrementally (the build folder is kept, so one
 * changed file rebuilds only what depends on it); then makes the result the
 * library this process uses.
 *
 * The cache is LLTM_CACHE_DIR, else $XDG_CACHE_HOME/lltm, else ~/.cache/lltm.
 * Processes building at once take turns through a lock folder; the
 * up-to-date stamp is written by an atomic rename, after the build.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, relative } from "node:path";

import { LLTMError } from "./errors.ts";
import { environment, libraryFile, useLibrary } from "./native/index.ts";

export interface LoadOptions {
  /** Print each step, and the build's own output. */
  verbose?: boolean;
  /** Where builds are cached (default: LLTM_CACHE_DIR, $XDG_CACHE_HOME/lltm or ~/.cache/lltm). */
  cacheDir?: string;
  /** Build the CUDA backend: "auto" (when nvcc is found), "on" or "off". */
  cuda?: "auto" | "on" | "off";
  buildType?: "Release" | "Debug";
  /** The project folder holding CMakeLists.txt, csrc/ and cuda/ (default: this package). */
  sourceDir?: string;
  /** Make the result the library this process uses (default true; false only builds). */
  use?: boolean;
}

export interface LoadResult {
  /** The library that was built (or found up to date). */
  path: string;
  /** Whether this call ran the build. */
  rebuilt: boolean;
  /** Whether the process now uses this library (false when another one was already in use). */
  inUse: boolean;
  buildDir: string;
  /** The build tool's output, when it ran. */
  log: string;
}

const SOURCE_ROOTS = ["CMakeLists.txt", "cmake", "csrc", "cuda"];
const LOCK_STALE_MS = 15 * 60 * 1000;

export async function load(options: LoadOptions = {}): Promise<LoadResult> {
  const say = (message: string) => {
    if (options.verbose) console.log(`lltm: ${message}`);
  };
  const sourceDir = options.sourceDir ?? decodeURIComponent(new URL("..", import.meta.url).pathname);
  const cacheDir = options.cacheDir ?? environment("LLTM_CACHE_DIR") ??
    join(environment("XDG_CACHE_HOME") ?? join(homedir(), ".cache"), "lltm");
  const cuda = (options.cuda ?? "auto").toUpperCase();
  const buildType = options.buildType ?? "Release";
  const ninja = spawnSync("ninja", ["--version"]).status === 0;

  const toolchain = [tool("cmake", "--version"), tool(environment("CXX") ?? "c++", "--version"),
    cuda === "OFF" ? "" : tool("nvcc", "--version")].join("\n");
  const flags = `${buildType} LLTM_CUDA=${cuda} ninja=${ninja} ${sourceDir}`;
  const buildDir = join(cacheDir, `build-${sha256(toolchain + flags).slice(0, 16)}`);
  const sources = sourceHash(sourceDir);
  const stamp = join(buildDir, "stamp");
  const library = join(buildDir, "lib", libraryFile);
  say(`sources ${sources.slice(0, 12)}, build folder ${buildDir}`);

  const upToDate = () => existsSync(library) && existsSync(stamp) && readFileSync(stamp, "utf8") === sources;
  let rebuilt = false, log = "";
  if (upToDate()) {
    say("up to date; nothing to build");
  } else {
    mkdirSync(buildDir, { recursive: true });
    const unlock = await lock(join(buildDir, ".lock"), say);
    try {
      if (upToDate()) {
        say("built meanwhile by another process");
      } else {
        const run = (args: string[]) => {
          say(`$ cmake ${args.join(" ")}`);
          const r = spawnSync("cmake", args, { encoding: "utf8" });
          log += (r.stdout ?? "") + (r.stderr ?? "");
          if (options.verbose) process.stdout.write((r.stdout ?? "") + (r.stderr ?? ""));
          if (r.error) throw new LLTMError("INTERNAL", `load: cmake could not run (${r.error.message}); install CMake >= 3.24`);
          if (r.status !== 0) {
            const how = r.signal ? `killed by ${r.signal}` : `exit status ${r.status}`;
            throw new LLTMError("INTERNAL", `load: the build failed (cmake ${args[0]}, ${how}):\n${(r.stdout ?? "") + (r.stderr ?? "")}`);
          }
        };
        if (!existsSync(join(buildDir, "CMakeCache.txt"))) {
          run(["-S", sourceDir, "-B", buildDir, ...(ninja ? ["-G", "Ninja"] : []), `-DCMAKE_BUILD_TYPE=${buildType}`,
            `-DLLTM_CUDA=${cuda}`, `-DLLTM_OUTPUT_DIR=${join(buildDir, "lib")}`]);
        }
        run(["--build", buildDir, "--parallel"]);
        const temporary = `${stamp}.${process.pid}`;
        writeFileSync(temporary, sources);
        renameSync(temporary, stamp);
        rebuilt = true;
        say("built");
      }
    } finally {
      unlock();
    }
  }
  const inUse = options.use === false ? false : useLibrary(library);
  if (options.use !== false) {
    say(inUse ? `loaded ${library}` : `built ${library}, but another lltm library is already in use in this process`);
  }
  return { path: library, rebuilt, inUse, buildDir, log };
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

/** Takes the lock folder (mkdir is atomic), waiting for another holder; a lock older than 15 minutes is stale. */
async function lock(path: string, say: (m: string) => void): Promise<() => void> {
  for (let waited = 0; ; waited += 200) {
    try {
      mkdirSync(path);
      return () => rmSync(path, { recursive: true, force: true });
    } catch (e) {
      if ((e as { code?: string }).code !== "EEXIST") throw e;
      if (Date.now() - statSync(path).mtimeMs > LOCK_STALE_MS) {
        say(`removing a stale lock ${path}`);
        rmSync(path, { recursive: true, force: true });
        continue;
      }
      if (waited % 5000 === 0) say("waiting for another process's build");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
