/**
 * The checkpoint reader against 10,000 mutations of valid files: truncation,
 * bit flips, header lengths from 0 to 2^64 - 1, field mutations (dtypes,
 * shapes up to 2^53, offsets, prototype names, metadata), duplicated entries
 * and trailing bytes. Each result is either an LLTMError or exactly the
 * tensors the mutated file holds, as an independent reader of the format
 * (below, written from the safetensors rules) decodes them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import fc from "fast-check";

import { decodeCheckpoint } from "../ts/checkpoint.ts";
import { LLTMError, loadCheckpoint, saveCheckpoint, Tensor } from "../ts/index.ts";
import { assert, assertEquals, test } from "./harness.ts";

const RUNS = 10_000;
const dir = mkdtempSync(join(tmpdir(), "lltm-checkpoint-fuzz-"));

const sizes: Record<string, number> = {
  BOOL: 1, U8: 1, I8: 1, F8_E5M2: 1, F8_E4M3: 1, F8_E8M0: 1, I16: 2, U16: 2, F16: 2, BF16: 2,
  I32: 4, U32: 4, F32: 4, C64: 8, I64: 8, U64: 8, F64: 8,
};

interface Decoded {
  tensors: Map<string, { dtype: string; shape: number[]; bytes: Uint8Array }>;
  metadata: Map<string, string>;
}

/** What a file holds by the format's rules, or why it is invalid; data coverage checked byte by byte. */
function decode(file: Uint8Array): Decoded | string {
  if (file.length < 8) return "short";
  const n = new DataView(file.buffer, file.byteOffset, file.byteLength).getBigUint64(0, true);
  if (n > BigInt(file.length - 8)) return "header length";
  const start = 8 + Number(n);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(file.subarray(8, start)));
  } catch {
    return "json";
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) return "not an object";
  const data = file.subarray(start);
  const owners = new Int32Array(data.length);
  const zeroSized: [number, string][] = [];
  let id = 0;
  const result: Decoded = { tensors: new Map(), metadata: new Map() };
  for (const [name, value] of Object.entries(header)) {
    if (name === "__metadata__") {
      if (value === null) continue;
      if (typeof value !== "object" || Array.isArray(value)) return "metadata";
      for (const [k, v] of Object.entries(value as object)) {
        if (typeof v !== "string") return "metadata value";
        result.metadata.set(k, v);
      }
      continue;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) return "entry";
    const dtype = Object.getOwnPropertyDescriptor(value, "dtype")?.value;
    const shape = Object.getOwnPropertyDescriptor(value, "shape")?.value;
    const offsets = Object.getOwnPropertyDescriptor(value, "data_offsets")?.value;
    if (typeof dtype !== "string" || !Object.keys(sizes).includes(dtype)) return "dtype";
    if (!Array.isArray(shape) || shape.some((s) => !Number.isSafeInteger(s) || s < 0)) return "shape";
    if (!Array.isArray(offsets) || offsets.length !== 2 || offsets.some((o) => !Number.isSafeInteger(o) || o < 0)) return "offsets";
    const [begin, end] = offsets as [number, number];
    let bytes = BigInt(sizes[dtype]!);
    for (const s of shape) bytes *= BigInt(s);
    if (begin > end || BigInt(end - begin) !== bytes || end > data.length) return "range";
    id++;
    for (let i = begin; i < end; i++) {
      if (owners[i] !== 0) return "overlap";
      owners[i] = id;
    }
    if (begin === end) zeroSized.push([begin, name]);
    result.tensors.set(name, { dtype, shape: shape.map((s: number) => s + 0), bytes: data.slice(begin, end) });
  }
  // A zero-byte tensor owns no byte, but may not sit strictly inside another tensor's range.
  for (const [k, id] of zeroSized) if (k > 0 && k < data.length && owners[k - 1] === owners[k]) return "inside " + id;
  if (owners.some((o) => o === 0)) return "uncovered";
  return result;
}

/** Bases: files lltm wrote (prototype names, unicode, metadata) and one from another writer with an I64 scalar. */
function bases(): Uint8Array[] {
  const files: Uint8Array[] = [];
  const write = (tensors: Record<string, Tensor>, metadata: Record<string, string>) => {
    const path = join(dir, "base.safetensors");
    saveCheckpoint(path, tensors, metadata);
    files.push(new Uint8Array(readFileSync(path)));
    for (const t of Object.values(tensors)) t.dispose();
  };
  const named = Object.create(null) as Record<string, Tensor>;
  named["__proto__"] = Tensor.fromArray([1.5, -2]);
  named["constructor"] = Tensor.fromArray([[3]], { dtype: "float64" });
  write(named, { note: "prototype names" });
  write({ weights: Tensor.randn([3, 5], { seed: 1 }), bias: Tensor.randn([3], { seed: 2, dtype: "float64" }) }, { format: "lltm", "ä": "ö" });
  write({ "重み": Tensor.randn([2, 1, 2, 3], { seed: 3 }) }, {});
  const step = new Uint8Array(new BigInt64Array([12345n]).buffer);
  const w = new Uint8Array(new Float64Array([0.25, -1e300]).buffer);
  const json = new TextEncoder().encode(JSON.stringify({
    state: { dtype: "F64", shape: [2], data_offsets: [8, 24] },
    step: { dtype: "I64", shape: [], data_offsets: [0, 8] },
    __metadata__: null,
  }));
  const file = new Uint8Array(8 + json.length + 24);
  new DataView(file.buffer).setBigUint64(0, BigInt(json.length), true);
  file.set(json, 8);
  file.set(step, 8 + json.length);
  file.set(w, 16 + json.length);
  files.push(file);
  return files;
}

type Mutation = (file: Uint8Array) => Uint8Array;

function headerOf(file: Uint8Array): { start: number; header: Record<string, unknown> } | undefined {
  if (file.length < 8) return undefined;
  const n = new DataView(file.buffer, file.byteOffset, file.byteLength).getBigUint64(0, true);
  if (n > BigInt(file.length - 8)) return undefined;
  try {
    const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + Number(n))));
    if (typeof header !== "object" || header === null || Array.isArray(header)) return undefined;
    return { start: 8 + Number(n), header };
  } catch {
    return undefined;
  }
}

function rebuild(text: string, data: Uint8Array): Uint8Array {
  const json = new TextEncoder().encode(text);
  const file = new Uint8Array(8 + json.length + data.length);
  new DataView(file.buffer).setBigUint64(0, BigInt(json.length), true);
  file.set(json, 8);
  file.set(data, 8 + json.length);
  return file;
}

/** Changes one field of one entry (by position) of a parseable header, keeping the header length right. */
function field(which: number, key: string, value: unknown): Mutation {
  return (file) => {
    const h = headerOf(file);
    if (!h) return file;
    const names = Object.keys(h.header);
    if (names.length === 0) return file;
    const name = names[which % names.length]!;
    const entry = h.header[name];
    if (key === "name") {
      const renamed = Object.create(null) as Record<string, unknown>;
      for (const n of names) Object.defineProperty(renamed, n === name ? String(value) : n, { value: h.header[n], enumerable: true, configurable: true, writable: true });
      return rebuild(JSON.stringify(renamed), file.subarray(h.start));
    }
    if (typeof entry !== "object" || entry === null) return file;
    Object.defineProperty(entry, key, { value, enumerable: true, configurable: true, writable: true });
    return rebuild(JSON.stringify(h.header), file.subarray(h.start));
  };
}

const huge = fc.constantFrom(2 ** 53 - 1, 2 ** 53, 2 ** 40, 2 ** 32, 2 ** 31, -1, -0, 0.5, 1e300, Infinity, NaN);
const small = fc.integer({ min: 0, max: 40 });
const anyValue = fc.constantFrom<unknown>(null, 1, "x", [], {}, true, ["F32"], [[1]]);

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.nat().map((n): Mutation => (f) => f.slice(0, n % (f.length + 1))),
  fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })), { minLength: 1, maxLength: 4 }).map((flips): Mutation => (f) => {
    const g = f.slice();
    for (const [at, bit] of flips) if (g.length) g[at % g.length]! ^= 1 << bit;
    return g;
  }),
  fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.bigInt({ min: 0n, max: 400n })).map((n): Mutation => (f) => {
    const g = f.slice();
    if (g.length >= 8) new DataView(g.buffer).setBigUint64(0, n, true);
    return g;
  }),
  fc.tuple(fc.nat(), fc.oneof(
    fc.constantFrom("F32", "F64", "I64", "BOOL", "F16", "BF16", "U8", "constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", ""),
    anyValue,
  )).map(([i, v]) => field(i, "dtype", v)),
  fc.tuple(fc.nat(), fc.oneof(fc.array(fc.oneof(small, huge), { maxLength: 6 }), anyValue)).map(([i, v]) => field(i, "shape", v)),
  fc.tuple(fc.nat(), fc.oneof(fc.tuple(fc.oneof(small, huge), fc.oneof(small, huge)), fc.array(small, { maxLength: 3 }), anyValue))
    .map(([i, v]) => field(i, "data_offsets", v)),
  fc.tuple(fc.nat(), fc.constantFrom("__proto__", "constructor", "prototype", "toString", "__metadata__", "hasOwnProperty", "weights", "a"))
    .map(([i, v]) => field(i, "name", v)),
  fc.tuple(fc.nat(), fc.constantFrom("__proto__", "constructor", "x"), fc.oneof(fc.string(), anyValue))
    .map(([i, k, v]) => field(i, "__metadata__", { [k]: v })),
  // A duplicated entry in the text (JSON.parse keeps the last), or bytes added or removed at the end.
  fc.nat().map((i): Mutation => (f) => {
    const h = headerOf(f);
    if (!h) return f;
    const names = Object.keys(h.header);
    if (!names.length) return f;
    const name = names[i % names.length]!;
    const text = new TextDecoder().decode(f.subarray(8, h.start)).trimEnd();
    return rebuild(`${text.slice(0, -1)},${JSON.stringify(name)}:${JSON.stringify(h.header[name])}}`, f.subarray(h.start));
  }),
  fc.uint8Array({ minLength: 1, maxLength: 16 }).map((extra): Mutation => (f) => new Uint8Array([...f, ...extra])),
);

function bytesOf(t: Tensor): Uint8Array {
  const v = t.toTypedArray();
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

test(`the checkpoint reader survives ${RUNS} mutated files: an LLTMError or exactly what the file holds`, () => {
  const files = bases();
  // Most cases decode the bytes in memory (a file per case costs milliseconds of disk); every 50th goes through a file.
  let accepted = 0, n = 0;
  fc.assert(
    fc.property(fc.nat(files.length - 1), fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.boolean(), (base, mutations, skip) => {
      const file = mutations.reduce((f, m) => m(f), files[base]!);
      const path = n++ % 50 === 0 ? join(dir, `mutated-${n}.safetensors`) : undefined;
      if (path) writeFileSync(path, file);
      const expected = decode(file);
      let loaded: ReturnType<typeof loadCheckpoint>;
      try {
        const options = { nonFloat: skip ? "skip" as const : "error" as const };
        loaded = path ? loadCheckpoint(path, options) : decodeCheckpoint(file, options);
      } catch (e) {
        if (!(e instanceof LLTMError)) throw new Error(`not an LLTMError: ${e}`);
        if (typeof expected === "string") return;
        // A valid file lltm cannot hold: a tensor of another dtype, or a scalar or empty float tensor.
        const floats = [...expected.tensors.values()].filter((t) => t.dtype === "F32" || t.dtype === "F64");
        const others = expected.tensors.size - floats.length;
        const unloadable = floats.some((t) => t.shape.length < 1 || t.shape.length > 4 || t.shape.includes(0));
        assert((others > 0 && !skip && e.code === "INVALID_DTYPE") || (unloadable && e.code === "INVALID_SHAPE"), `refused a valid file: ${e.message}`);
        return;
      }
      try {
        assert(typeof expected !== "string", `accepted a file the format refuses (${expected})`);
        const want = expected as Decoded;
        accepted++;
        assert(Object.getPrototypeOf(loaded.tensors) === null, "tensors have no prototype");
        const names = Object.keys(loaded.tensors).sort();
        const kept = [...want.tensors].filter(([, t]) => skip ? t.dtype === "F32" || t.dtype === "F64" : true);
        assertEquals(names, kept.map(([n]) => n).sort());
        for (const [name, t] of kept) {
          const got = Object.getOwnPropertyDescriptor(loaded.tensors, name)!.value as Tensor;
          assertEquals(got.dtype, t.dtype === "F32" ? "float32" : "float64", name);
          assertEquals(got.shape, t.shape, name);
          assert(bytesOf(got).every((b, i) => b === t.bytes[i]), `${name}: the bytes differ`);
        }
        assertEquals(loaded.skipped.map((s) => s.name).sort(), [...want.tensors].filter(([, t]) => t.dtype !== "F32" && t.dtype !== "F64").map(([n]) => n).sort());
        assertEquals(Object.entries(loaded.metadata).sort(), [...want.metadata].sort());
      } finally {
        for (const t of Object.values(loaded.tensors)) t.dispose();
      }
    }),
    { numRuns: RUNS },
  );
  rmSync(dir, { recursive: true, force: true });
  assert(accepted > RUNS / 50, `too few mutated files were valid to test the accepting side: ${accepted}`);
});
