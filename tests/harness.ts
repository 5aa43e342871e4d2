/**
 * One test API for the three runners: `bun test` (bun:test), `deno test`
 * (Deno.test) and `node --test` (node:test), plus the few assertions the
 * suite needs.
 */
import { backendInfo, LLTMError } from "../ts/index.ts";

type Body = () => void | Promise<void>;

interface BunTest {
  test: ((name: string, fn: Body, timeoutMs?: number) => void) & { skip: (name: string, fn: Body) => void };
  afterAll(fn: Body): void;
}

// Bun's default of 5 s per test is too short for the just-in-time build on a slow machine.
const TIMEOUT_MS = 10 * 60 * 1000;

interface NodeTest {
  test(name: string, options: { skip?: boolean; timeout?: number }, fn: Body): void;
  after(fn: Body): void;
}

const runtime = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined"
  ? "bun"
  : typeof (globalThis as { Deno?: unknown }).Deno !== "undefined"
  ? "deno"
  : "node";
// Specifiers held in variables, so that no runner resolves another runner's module.
const bunTestModule = "bun:test", nodeTestModule = "node:test";
const bunTest = runtime === "bun" ? ((await import(bunTestModule)) as BunTest) : undefined;
const nodeTest = runtime === "node" ? ((await import(nodeTestModule)) as NodeTest) : undefined;

/** Registers a test; with `skip` set to a reason, registers it as skipped and says why once. */
export function test(name: string, fn: Body, options: { skip?: string | false } = {}): void {
  if (options.skip) {
    skipNotice(options.skip);
    if (bunTest) bunTest.test.skip(name, fn);
    else if (nodeTest) nodeTest.test(name, { skip: true }, fn);
    else Deno.test({ name, fn, ignore: true });
    return;
  }
  if (bunTest) bunTest.test(name, fn, TIMEOUT_MS);
  else if (nodeTest) nodeTest.test(name, { timeout: TIMEOUT_MS }, fn);
  else Deno.test({ name, fn, sanitizeResources: false, sanitizeOps: false });
}

/** Runs `fn` once the file's tests have run, pass or fail (Deno: when the test process ends). */
export function afterAll(fn: () => void): void {
  if (bunTest) bunTest.afterAll(fn);
  else if (nodeTest) nodeTest.after(fn);
  else globalThis.addEventListener("unload", fn);
}

const noticed = new Set<string>();
function skipNotice(reason: string): void {
  if (noticed.has(reason)) return;
  noticed.add(reason);
  console.log(`skipping: ${reason}`);
}

/** Why CUDA tests cannot run here, or false when they can. */
export function cudaSkipReason(): string | false {
  const info = backendInfo();
  if (info.cuda) return false;
  return "CUDA tests: " + (info.cudaDevices === 0 ? "no CUDA backend or no GPU on this machine" : "CUDA unavailable");
}

export class AssertionError extends Error {}

export function assert(condition: unknown, message = "assertion failed"): asserts condition {
  if (!condition) throw new AssertionError(message);
}

export function assertEquals<T>(actual: T, expected: T, message = ""): void {
  const a = JSON.stringify(actual), e = JSON.stringify(expected);
  if (a !== e) throw new AssertionError(`${message}${message ? ": " : ""}expected ${e}, got ${a}`);
}

/** Checks that `fn` throws an LLTMError with `code` whose message matches `pattern`. */
export function assertThrowsLLTM(fn: () => unknown, code: LLTMError["code"], pattern: RegExp): LLTMError {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof LLTMError)) throw new AssertionError(`expected an LLTMError, got ${e}`);
    if (e.code !== code) throw new AssertionError(`expected code ${code}, got ${e.code}: ${e.message}`);
    if (!pattern.test(e.message)) throw new AssertionError(`message ${JSON.stringify(e.message)} does not match ${pattern}`);
    return e;
  }
  throw new AssertionError(`expected ${code} matching ${pattern}, but nothing was thrown`);
}
