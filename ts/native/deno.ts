/** The Deno binding of the C ABI, over Deno.dlopen. Needs --allow-ffi. */
import { type ArgKind, bindFunctions, type NativeLibrary, type ReturnKind, symbols } from "./symbols.ts";

// Addresses travel as usize so that they stay plain numbers, as under Bun.
const argTypes: Record<ArgKind, Deno.NativeType> = {
  ptr: "usize",
  buffer: "buffer",
  i32: "i32",
  u32: "u32",
  i64: "i64",
  u64: "u64",
  f64: "f64",
};
const returnTypes: Record<ReturnKind, Deno.NativeResultType> = {
  i32: "i32",
  u32: "u32",
  cstring: "pointer",
};

export function open(path: string): NativeLibrary {
  const spec: Record<string, Deno.ForeignFunction> = {};
  for (const [name, s] of Object.entries(symbols)) {
    spec[name] = { parameters: s.args.map((a) => argTypes[a]), result: returnTypes[s.returns] };
  }
  const lib = Deno.dlopen(path, spec);
  const functions = bindFunctions<Deno.PointerValue>(
    lib.symbols as unknown as Record<string, (...args: unknown[]) => unknown>,
    (p) => (p === null ? "" : Deno.UnsafePointerView.getCString(p)),
  );
  return {
    ...functions,
    path,
    view: (address: number, bytes: number) => {
      const pointer = Deno.UnsafePointer.create(BigInt(address));
      if (pointer === null) throw new Error("view of a null address");
      return Deno.UnsafePointerView.getArrayBuffer(pointer, bytes);
    },
  };
}
