/**
 * load(): builds once into the cache, does nothing when nothing changed, rebuilds only what a change affects,
 * rebuilds a cached library that is incomplete, takes over the lock of a build that is gone, and names the
 * cache and LLTM_CACHE_DIR when it cannot write there.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

import { LLTMError, load, type LoadOptions, type LoadResult } from "../ts/index.ts";
import { libraryFilesProblem } from "../ts/native/library_file.ts";
import { assert, assertEquals, test } from "./harness.ts";
import { tempDir } from "./temp_dir.ts";

const scratch = tempDir("lltm-jit-");

interface Fixture {
  options: LoadOptions;
  sources: string;
  first: LoadResult;
}

let fixture: Promise<Fixture> | undefined;

/** A copy of the native sources and a cache built from them, shared by the tests below (one build, not four). */
function built(): Promise<Fixture> {
  fixture ??= (async () => {
    const root = decodeURIComponent(new URL("..", import.meta.url).pathname);
    const work = mkdtempSync(join(scratch, "fixture-"));
    const sources = join(work, "src");
    for (const entry of ["CMakeLists.txt", "cmake", "csrc", "cuda"]) cpSync(join(root, entry), join(sources, entry), { recursive: true });
    // use: false, so that the library the other tests use stays the package's. Debug: what these tests
    // check is load()'s cache, lock and incremental build, not the compiled code (the suite runs on the
    // Release build of the same sources), and -O0 compiles the kernels about seven times faster than -O3.
    const options = { sourceDir: sources, cacheDir: join(work, "cache"), cuda: "off" as const, buildType: "Debug" as const, use: false };
    return { options, sources, first: await load(options) };
  })();
  return fixture;
}

/** Runs `fn` with console.warn captured (each message also to `seen`); returns what it printed. */
async function warnings<T>(fn: () => Promise<T>, seen?: (message: string) => void): Promise<{ result: T; printed: string[] }> {
  const printed: string[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => {
    printed.push(args.join(" "));
    seen?.(args.join(" "));
  };
  try {
    return { result: await fn(), printed };
  } finally {
    console.warn = original;
  }
}

/** Fails after `ms` instead of waiting for the test runner's timeout (the old lock waited 15 minutes). */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function host(): string {
  try {
    return hostname();
  } catch {
    return readFileSync("/etc/hostname", "utf8").trim();
  }
}

test("load() builds, then finds the build up to date, then recompiles only a changed file", async () => {
  const { options, sources, first } = await built();
  assert(first.rebuilt, "the first load builds");
  const second = await load(options);
  assert(!second.rebuilt, "nothing changed: no build");
  assertEquals(second.path, first.path);

  const file = join(sources, "csrc", "status.cpp");
  writeFileSync(file, readFileSync(file, "utf8") + "\n// touched by the test\n");
  const third = await load(options);
  assert(third.rebuilt, "a changed source rebuilds");
  const compiled = third.log.split("\n").filter((line) => /Building CXX object/.test(line));
  assertEquals(compiled.length, 1, `compiled: ${compiled.join(" | ")}`);
  assert(/status\.cpp/.test(compiled[0]!), compiled[0]!);
});

test("a truncated library in the cache is rebuilt, not opened", async () => {
  const { options } = await built();
  const good = await load(options);
  const size = statSync(good.path).size;
  for (const cut of [Math.floor(size / 2), size - 1]) {
    truncateSync(good.path, cut);
    const { result, printed } = await warnings(() => load(options));
    assert(result.rebuilt, `a library cut to ${cut} bytes is rebuilt`);
    assertEquals(statSync(result.path).size, size);
    assertEquals(libraryFilesProblem(result.path), undefined);
    assert(printed.some((m) => /the built library is incomplete \(.*truncated.*\); rebuilding it/.test(m)), printed.join("\n"));
  }
});

test("the build lock names its owner and is taken over, with a message, when the owner is gone", async () => {
  const { options, first } = await built();
  const lock = join(first.buildDir, ".lock");
  const stamp = join(first.buildDir, "stamp");
  const dead = spawnSync("true").pid!;

  // A build killed while holding the lock: its process is gone.
  rmSync(stamp);
  mkdirSync(lock);
  writeFileSync(join(lock, "owner.json"), JSON.stringify({ pid: dead, host: host(), started: Date.now() - 1000 }));
  const taken = await warnings(() => within(60_000, "a lock of a dead process", load(options)));
  assert(taken.result.rebuilt, "built after taking the lock over");
  assert(
    taken.printed.some((m) => new RegExp(`taking over the build lock .*\\.lock: its owner, process ${dead} on .*, is no longer running`).test(m)),
    taken.printed.join("\n"),
  );

  // A lock of an older lltm (or a process killed between mkdir and writing its name): no owner, old.
  rmSync(stamp);
  mkdirSync(lock);
  utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  const anonymous = await warnings(() => within(60_000, "a lock without an owner", load(options)));
  assert(anonymous.printed.some((m) => /it names no owner and is \d+ s old/.test(m)), anonymous.printed.join("\n"));

  // A live owner is waited for, by name, and its lock is taken when it ends.
  rmSync(stamp);
  const sleeper = spawn("sleep", ["600"]);
  let sawWaiting = false;
  mkdirSync(lock);
  writeFileSync(join(lock, "owner.json"), JSON.stringify({ pid: sleeper.pid, host: host(), started: Date.now() }));
  const waited = await warnings(async () => {
    const loading = load(options);
    try {
      // Ends the owner once load() says it waits for it.
      const deadline = Date.now() + 60_000;
      while (!sawWaiting) {
        if (Date.now() > deadline) throw new Error("load() never said it waits for the lock's owner");
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      sleeper.kill("SIGKILL");
    }
    return await within(60_000, "a lock of a live process", loading);
  }, (m) => {
    if (/waiting for the build of process/.test(m)) sawWaiting = true;
  });
  assert(waited.printed.some((m) => new RegExp(`waiting for the build of process ${sleeper.pid} on `).test(m)), waited.printed.join("\n"));
  assert(waited.printed.some((m) => /is no longer running/.test(m)), waited.printed.join("\n"));
  assert(waited.result.rebuilt, "built after the owner ended");
});

test("a cache that cannot be written gives an LLTMError naming it and LLTM_CACHE_DIR", async () => {
  const work = mkdtempSync(join(scratch, "readonly-"));
  const readOnly = join(work, "read-only");
  mkdirSync(readOnly);
  chmodSync(readOnly, 0o555);
  let probe = true;
  try {
    writeFileSync(join(readOnly, "probe"), "");
  } catch {
    probe = false;
  }
  // Root writes through permissions; /sys refuses every new entry, even to root.
  const caches = [probe ? "/sys/lltm-cache" : join(readOnly, "cache"), join(work, "a-file", "cache")];
  writeFileSync(join(work, "a-file"), "");
  const root = decodeURIComponent(new URL("..", import.meta.url).pathname);
  for (const cacheDir of caches) {
    try {
      await load({ sourceDir: root, cacheDir, cuda: "off", use: false });
      throw new Error(`load() wrote into ${cacheDir}`);
    } catch (e) {
      assert(e instanceof LLTMError, `not an LLTMError: ${e}`);
      assertEquals(e.code, "IO");
      assert(e.message.includes(`cannot write the build cache ${cacheDir}`), e.message);
      assert(/set LLTM_CACHE_DIR \(or load's cacheDir option\) to a writable folder/.test(e.message), e.message);
    }
  }
  chmodSync(readOnly, 0o755);
}, { skip: (globalThis as { process?: { platform?: string } }).process?.platform === "win32" ? "permissions differ on Windows" : false });
