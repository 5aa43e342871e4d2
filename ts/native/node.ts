/**
 * The Node binding of the C ABI, over node:ffi (Node >= 26; behind
 * --experimental-ffi on the releases that still gate it).
 *
 * node:ffi takes 64-bit integers and addresses only as BigInts, while the
 * rest of lltm holds addresses as plain numbers (as under Bun and Deno), so
 * each function with such arguments converts them on the way in.
 *
 * 32-bit integer arguments are declared to node:ffi as pointers: it checks an
 * integer argument's type and range in JavaScript on every call (about 40 ns,
 * as much as the rest of its call), and passes a pointer through. On the
 * 64-bit ABIs lltm runs on (x86-64 System V and Windows, AArch64) a 32-bit
 * argument travels in the low half of a 64-bit register or stack slot whose
 * upper half the callee ignores, so the 64-bit value with the same low 32 bits
 * is the same argument.
 */
import { LLTMError } from "../errors.ts";
import { type ArgKind, bindFunctions, type NativeLibrary, type ReturnKind, symbols } from "./symbols.ts";

/** The part of node:ffi this binding uses (declared here, so that no Node types are needed to compile it). */
interface NodeFFI {
  dlopen(path: string, definitions: Record<string, { arguments: string[]; return: string }>): {
    functions: Record<string, (...args: unknown[]) => unknown>;
  };
  toString(pointer: bigint): string | null;
  toArrayBuffer(pointer: bigint, length: number, copy?: boolean): ArrayBuffer;
  getRawPointer(source: ArrayBufferLike): bigint;
}

const argTypes: Record<ArgKind, string> = {
  ptr: "pointer",
  buffer: "pointer",
  i32: "pointer",
  u32: "pointer",
  i64: "i64",
  u64: "u64",
  f64: "f64",
};
const returnTypes: Record<ReturnKind, string> = { i32: "i32", u32: "u32", cstring: "pointer" };

/**
 * Addresses as BigInts, remembered: the same few addresses (the descriptor
 * slots) come back on every call, and a lookup costs less than a BigInt.
 * Bounded, since data addresses vary without end.
 */
const addresses = new Map<number, bigint>();
function address(n: number): bigint {
  let b = addresses.get(n);
  if (b === undefined) {
    if (addresses.size >= 4096) addresses.clear();
    b = BigInt(n);
    addresses.set(n, b);
  }
  return b;
}

/** 32-bit integers as the 64-bit BigInts with the same low half; the small ones (op codes, devices, flags) remembered. */
const smallIntegers = Array.from({ length: 1024 }, (_, i) => BigInt(i));
function int32Bits(n: number): bigint {
  return (n >>> 0 === n && n < 1024 ? smallIntegers[n] : undefined) ?? BigInt.asUintN(32, BigInt(n));
}

/**
 * The address of a typed array's memory, remembered per ArrayBuffer: node:ffi
 * takes a "buffer" argument on its slow path, but a BigInt address on its fast
 * one. Once its address has been taken the memory of a fixed-length
 * ArrayBuffer no longer moves; a detached buffer is refused.
 */
function bufferAddress(ffi: NodeFFI, bases: WeakMap<ArrayBufferLike, bigint>, view: ArrayBufferView): bigint {
  const buffer = view.buffer;
  if ((buffer as { detached?: boolean }).detached) throw new TypeError("lltm: a native call was given a typed array of a detached ArrayBuffer");
  let base = bases.get(buffer);
  if (base === undefined) {
    base = ffi.getRawPointer(buffer);
    bases.set(buffer, base);
  }
  return view.byteOffset === 0 ? base : base + BigInt(view.byteOffset);
}

/** `f` with its number arguments for 64-bit integers and addresses made BigInts, and its buffers addresses. */
function converting(ffi: NodeFFI, f: (...args: unknown[]) => unknown, kinds: readonly ArgKind[]): (...args: unknown[]) => unknown {
  const bases = new WeakMap<ArrayBufferLike, bigint>();
  const convert = kinds.map((kind): ((value: unknown) => unknown) | undefined => {
    if (kind === "ptr") return (v) => address(v as number);
    if (kind === "i64" || kind === "u64") return (v) => BigInt(v as number);
    if (kind === "i32" || kind === "u32") return (v) => int32Bits(v as number);
    if (kind === "buffer") return (v) => bufferAddress(ffi, bases, v as ArrayBufferView);
    return undefined;
  });
  if (convert.every((c) => c === undefined)) return f;
  const n = kinds.length;
  // The hot calls (lltm_run, lltm_buffer_bytes, lltm_free, lltm_alloc) take two to four arguments:
  // fixed arities, so that no argument array is made per call.
  const id = (v: unknown) => v;
  const [c0 = id, c1 = id, c2 = id, c3 = id] = convert.map((c) => c ?? id);
  if (n === 2) return (a: unknown, b: unknown) => f(c0(a), c1(b));
  if (n === 3) return (a: unknown, b: unknown, c: unknown) => f(c0(a), c1(b), c2(c));
  if (n === 4) return (a: unknown, b: unknown, c: unknown, d: unknown) => f(c0(a), c1(b), c2(c), c3(d));
  return (...args: unknown[]) => {
    for (let i = 0; i < n; i++) {
      const c = convert[i];
      if (c !== undefined) args[i] = c(args[i]);
    }
    return f(...args);
  };
}

/** node:ffi, or why it cannot be had in this process. */
function nodeFFI(): NodeFFI {
  const process = (globalThis as {
    process?: { version: string; getBuiltinModule?: (id: string) => unknown };
  }).process;
  const version = process?.version ?? "unknown";
  const major = Number(/^v(\d+)/.exec(version)?.[1] ?? 0);
  let ffi: unknown;
  try {
    ffi = process?.getBuiltinModule?.("node:ffi");
  } catch {
    ffi = undefined;
  }
  if (ffi) return ffi as NodeFFI;
  const how = major < 26
    ? `lltm needs Node >= 26 (node:ffi); this is Node ${version}`
    : `node:ffi is not enabled in Node ${version}; run node with --experimental-ffi`;
  throw new LLTMError("LIBRARY_UNAVAILABLE", `${how} (or use Bun or Deno)`);
}

export function open(path: string): NativeLibrary {
  const ffi = nodeFFI();
  const definitions: Record<string, { arguments: string[]; return: string }> = {};
  for (const [name, s] of Object.entries(symbols)) {
    definitions[name] = { arguments: s.args.map((a) => argTypes[a]), return: returnTypes[s.returns] };
  }
  const { functions: raw } = ffi.dlopen(path, definitions);
  const converted: Record<string, (...args: unknown[]) => unknown> = {};
  for (const [name, s] of Object.entries(symbols)) converted[name] = converting(ffi, raw[name]!, s.args);
  const functions = bindFunctions<bigint>(converted, (p) => (p === 0n ? "" : ffi.toString(p) ?? ""));
  return {
    ...functions,
    path,
    view: (address: number, bytes: number) => ffi.toArrayBuffer(BigInt(address), bytes, false),
  };
}
