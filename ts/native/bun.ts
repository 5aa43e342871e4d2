/** The Bun binding of the C ABI, over bun:ffi. */
import { CString, dlopen, FFIType, toArrayBuffer, type Pointer } from "bun:ffi";

import { type ArgKind, bindFunctions, type NativeLibrary, type ReturnKind, symbols } from "./symbols.ts";

const argTypes: Record<ArgKind, FFIType> = {
  ptr: FFIType.ptr,
  buffer: FFIType.ptr,
  i32: FFIType.i32,
  u32: FFIType.u32,
  i64: FFIType.i64,
  u64: FFIType.u64,
  f64: FFIType.f64,
};
const returnTypes: Record<ReturnKind, FFIType> = {
  i32: FFIType.i32,
  u32: FFIType.u32,
  cstring: FFIType.ptr,
};

export function open(path: string): NativeLibrary {
  const spec = Object.fromEntries(
    Object.entries(symbols).map(([name, s]) => [
      name,
      { args: s.args.map((a) => argTypes[a]), returns: returnTypes[s.returns] },
    ]),
  );
  const lib = dlopen(path, spec);
  const functions = bindFunctions<Pointer | null>(
    lib.symbols as unknown as Record<string, (...args: unknown[]) => unknown>,
    (p) => (p === null ? "" : new CString(p).toString()),
  );
  return {
    ...functions,
    path,
    view: (address: number, bytes: number) => toArrayBuffer(address as Pointer, 0, bytes) as ArrayBuffer,
  };
}
