/** The Deno binding of the C ABI, over Deno.dlopen. Needs --allow-ffi. */
import { LLTMError, withPermissions } from "../errors.ts";
import { type ArgKind, bindFunctions, type NativeLibrary, type ReturnKind, symbols } from "./symbols.ts";

/**
 * The part of Deno's FFI this binding uses, declared here so that compiling
 * lltm (or a consumer of its types) needs no Deno namespace types.
 */
type DenoPointer = object | null;
interface DenoFFI {
  dlopen(
    path: string,
    symbols: Record<string, { parameters: string[]; result: string }>,
  ): { symbols: Record<string, (...args: unknown[]) => unknown> };
  UnsafePointer: { create(address: bigint): DenoPointer };
  UnsafePointerView: {
    getCString(pointer: NonNullable<DenoPointer>): string;
    getArrayBuffer(pointer: NonNullable<DenoPointer>, bytes: number): ArrayBuffer;
  };
}

// Addresses travel as usize so that they stay plain numbers, as under Bun.
const argTypes: Record<ArgKind, string> = {
  ptr: "usize",
  buffer: "buffer",
  i32: "i32",
  u32: "u32",
  i64: "i64",
  u64: "u64",
  f64: "f64",
};
const returnTypes: Record<ReturnKind, string> = {
  i32: "i32",
  u32: "u32",
  cstring: "pointer",
};

export function open(path: string): NativeLibrary {
  const deno = (globalThis as unknown as { Deno: DenoFFI }).Deno;
  const spec: Record<string, { parameters: string[]; result: string }> = {};
  for (const [name, s] of Object.entries(symbols)) {
    spec[name] = { parameters: s.args.map((a) => argTypes[a]), result: returnTypes[s.returns] };
  }
  const lib = deno.dlopen(path, spec);
  const functions = bindFunctions<DenoPointer>(
    lib.symbols,
    (p) => (p === null ? "" : deno.UnsafePointerView.getCString(p)),
  );
  return {
    ...functions,
    path,
    view: (address: number, bytes: number) => {
      const pointer = withPermissions(
        "lltm: viewing native memory (an unscoped --allow-ffi, not one limited to the library's path)",
        () => deno.UnsafePointer.create(BigInt(address)),
      );
      if (pointer === null) throw new LLTMError("INTERNAL", "view of a null address");
      return deno.UnsafePointerView.getArrayBuffer(pointer, bytes);
    },
  };
}
