/** safetensors checkpoints: round trips, and clear errors for bad files. */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import fc from "fast-check";

import { type DType, LLTMLayer, loadCheckpoint, saveCheckpoint, Tensor } from "../ts/index.ts";
import { startChild, testFile } from "./child.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";
import { tempDir } from "./temp_dir.ts";

const dir = tempDir("lltm-checkpoint-");

test("tensors round-trip through a checkpoint exactly, with metadata", () => {
  const shape = fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 3 });
  fc.assert(
    fc.property(shape, shape, fc.constantFrom<DType>("float32", "float64"), fc.integer({ min: 0, max: 1000 }), (s1, s2, dtype, seed) => {
      const path = join(dir, `round-trip-${seed}.safetensors`);
      using a = Tensor.randn(s1, { dtype, seed });
      using b = Tensor.randn(s2, { dtype: "float64", seed: seed + 1 });
      saveCheckpoint(path, { a, b }, { note: "test" });
      const { tensors, metadata } = loadCheckpoint(path);
      try {
        assertEquals(Object.keys(tensors).sort(), ["a", "b"]);
        assertEquals(tensors.a!.dtype, dtype);
        assertEquals(tensors.a!.shape, s1);
        assertEquals(Array.from(tensors.a!.toTypedArray()), Array.from(a.toTypedArray()));
        assertEquals(Array.from(tensors.b!.toTypedArray()), Array.from(b.toTypedArray()));
        assertEquals(metadata.note, "test");
      } finally {
        for (const t of Object.values(tensors)) t.dispose();
      }
    }),
    { numRuns: 15 },
  );
});

test("the file layout is safetensors': u64 header length, JSON header, little-endian data", () => {
  const path = join(dir, "layout.safetensors");
  using t = Tensor.fromArray([[1, 2], [3, 4]], { dtype: "float32" });
  saveCheckpoint(path, { t });
  const bytes = new Uint8Array(readFileSync(path));
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  assertEquals(n % 8, 0);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  assertEquals(header.t, { dtype: "F32", shape: [2, 2], data_offsets: [0, 16] });
  assertEquals(Array.from(new Float32Array(bytes.slice(8 + n).buffer)), [1, 2, 3, 4]);
});

test("truncated and malformed files are refused with a clear error", () => {
  const good = join(dir, "good.safetensors");
  using t = Tensor.ones([4, 4], { dtype: "float64" });
  saveCheckpoint(good, { t });
  const bytes = new Uint8Array(readFileSync(good));
  const cases: [string, Uint8Array, RegExp][] = [
    ["short.safetensors", bytes.slice(0, 5), /truncated: 5 bytes/],
    ["cut-header.safetensors", bytes.slice(0, 20), /truncated: the header needs/],
    ["cut-data.safetensors", bytes.slice(0, bytes.length - 8), /truncated: 't' ends at byte 128/],
  ];
  const broken = bytes.slice();
  broken[9] = "!".charCodeAt(0);
  cases.push(["broken.safetensors", broken, /the header is not valid JSON/]);
  for (const [name, content, pattern] of cases) {
    const path = join(dir, name);
    writeFileSync(path, content);
    assertThrowsLLTM(() => loadCheckpoint(path), "INVALID_ARGUMENT", pattern);
  }
});

test("LLTM.save and load round-trip, and load checks names, shapes and dtype", () => {
  const path = join(dir, "module.safetensors");
  using a = new LLTMLayer(3, 4, { seed: 1 });
  a.save(path);
  using b = new LLTMLayer(3, 4, { seed: 2 });
  b.load(path);
  assertEquals(Array.from(b.weights.toTypedArray()), Array.from(a.weights.toTypedArray()));
  using wrongSize = new LLTMLayer(3, 5);
  assertThrowsLLTM(() => wrongSize.load(path), "SHAPE_MISMATCH", /'weights' has shape \[12, 7\], the module needs \[15, 8\]/);
  using wrongType = new LLTMLayer(3, 4, { dtype: "float64" });
  assertThrowsLLTM(() => wrongType.load(path), "INVALID_DTYPE", /'weights' is float32, the module is float64/);
  const other = join(dir, "other.safetensors");
  using w = Tensor.zeros([12, 7]);
  saveCheckpoint(other, { w });
  assertThrowsLLTM(() => b.load(other), "INVALID_ARGUMENT", /has no tensor 'weights'/);
  assert(b.weights.toTypedArray().every((v, i) => v === a.weights.toTypedArray()[i]), "a failed load changes nothing");
});

/** A safetensors file from a header (an object, or JSON text as given) and data, unpadded. */
function craft(header: unknown, data: Uint8Array = new Uint8Array(0), headerLength?: bigint): Uint8Array {
  const json = new TextEncoder().encode(typeof header === "string" ? header : JSON.stringify(header));
  const file = new Uint8Array(8 + json.length + data.length);
  new DataView(file.buffer).setBigUint64(0, headerLength ?? BigInt(json.length), true);
  file.set(json, 8);
  file.set(data, 8 + json.length);
  return file;
}

let crafted = 0;
function load(content: Uint8Array, options: Parameters<typeof loadCheckpoint>[1] = {}) {
  const path = join(dir, `crafted-${crafted++}.safetensors`);
  writeFileSync(path, content);
  return loadCheckpoint(path, options);
}

const f32 = (...values: number[]) => new Uint8Array(new Float32Array(values).buffer);

test("a dtype is looked up as an own name: 'constructor', '__proto__' and ['F32'] are refused", () => {
  for (const dtype of ["constructor", "__proto__", "toString", ["F32"], ["F64"], null, 4]) {
    const file = craft({ t: { dtype, shape: [2], data_offsets: [0, 16] } }, new Uint8Array(16));
    assertThrowsLLTM(() => load(file), "INVALID_ARGUMENT", /'t' has dtype .*; expected a safetensors dtype/);
  }
});

test("tensors named '__proto__' or 'constructor' are tensors like any other, in both directions", () => {
  const path = join(dir, "prototype-names.safetensors");
  using a = Tensor.fromArray([1, 2]);
  using b = Tensor.fromArray([3]);
  const named = JSON.parse('{"__proto__": 0, "constructor": 0}') as Record<string, Tensor>;
  named["constructor"] = b;
  Object.defineProperty(named, "__proto__", { value: a, enumerable: true });
  saveCheckpoint(path, named, { __proto__: "x" } as unknown as Record<string, string>);
  const { tensors, metadata } = loadCheckpoint(path);
  try {
    assertEquals(Object.keys(tensors).sort(), ["__proto__", "constructor"]);
    assert(Object.getPrototypeOf(tensors) === null, "the result has no prototype to replace");
    assert(Object.getOwnPropertyDescriptor(tensors, "__proto__")?.value instanceof Tensor, "'__proto__' is an own tensor");
    assertEquals(Object.getOwnPropertyDescriptor(tensors, "__proto__")!.value.toArray(), [1, 2]);
    assertEquals(tensors["constructor"]!.toArray(), [3]);
    assertEquals(Object.keys(metadata), []);
  } finally {
    for (const t of Object.values(tensors)) t.dispose();
  }
  // A file written by another tool, with "__proto__" in the header JSON.
  const file = craft('{"__proto__":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', f32(5));
  const loaded = load(file).tensors;
  assertEquals(Object.keys(loaded), ["__proto__"]);
  assert(Object.getPrototypeOf(loaded) === null, "the prototype is untouched");
  Object.getOwnPropertyDescriptor(loaded, "__proto__")!.value.dispose();
});

test("data ranges must be disjoint and cover the data exactly", () => {
  const t = (begin: number, end: number) => ({ dtype: "F32", shape: [(end - begin) / 4], data_offsets: [begin, end] });
  const cases: [unknown, Uint8Array, RegExp][] = [
    [{ a: t(0, 8), b: t(4, 12) }, f32(1, 2, 3), /'b' \(bytes 4 to 12\) overlaps 'a' \(bytes 0 to 8\)/],
    [{ a: t(0, 8), b: t(0, 8) }, f32(1, 2), /overlaps/],
    [{ a: t(0, 4), b: t(8, 12) }, f32(1, 2, 3), /bytes 4 to 8 of the data belong to no tensor/],
    [{ a: t(4, 8) }, f32(1, 2), /bytes 0 to 4 of the data belong to no tensor/],
    [{ a: t(0, 4) }, f32(1, 2), /4 trailing bytes after the last tensor/],
    [{}, f32(1), /4 trailing bytes/],
  ];
  for (const [header, data, pattern] of cases) assertThrowsLLTM(() => load(craft(header, data)), "INVALID_ARGUMENT", pattern);
  const empty = load(craft({ __metadata__: { k: "v" } }));
  assertEquals(Object.keys(empty.tensors), []);
  assertEquals(empty.metadata.k, "v");
});

test("the header length is read as a u64: every length past the file is refused, up to 2^64 - 1", () => {
  const data = f32(1);
  const header = { a: { dtype: "F32", shape: [1], data_offsets: [0, 4] } };
  const length = BigInt(JSON.stringify(header).length);
  for (const n of [length + 5n, 2n ** 32n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 1n]) {
    assertThrowsLLTM(() => load(craft(header, data, n)), "INVALID_ARGUMENT", new RegExp(`truncated: the header needs ${n} bytes`));
  }
  assertThrowsLLTM(() => load(craft(header, data, 0n)), "INVALID_ARGUMENT", /the header is not valid JSON/);
  assertThrowsLLTM(() => load(craft(header, data, length - 1n)), "INVALID_ARGUMENT", /the header is not valid JSON/);
});

test("sizes past 2^53 are computed exactly and refused", () => {
  const cases = [
    { dtype: "F64", shape: [2 ** 40, 2 ** 40], data_offsets: [0, 0] },
    { dtype: "F64", shape: [2 ** 53 - 1, 3], data_offsets: [0, 8] },
    { dtype: "F32", shape: [2], data_offsets: [0, 2 ** 53] },
    { dtype: "F32", shape: [1], data_offsets: [-4, 0] },
    { dtype: "F32", shape: [1.5], data_offsets: [0, 6] },
    { dtype: "F32", shape: [1], data_offsets: [8, 4] },
    { dtype: "F32", shape: "1", data_offsets: [0, 4] },
    { dtype: "F32", shape: [1], data_offsets: [0, 4, 8] },
  ];
  for (const entry of cases) {
    assertThrowsLLTM(() => load(craft({ t: entry }, f32(1))), "INVALID_ARGUMENT", /'t' has (data_offsets|shape)/);
  }
});

test("metadata holds strings only: saveCheckpoint refuses others, loadCheckpoint refuses files with others", () => {
  using t = Tensor.fromArray([1]);
  const path = join(dir, "metadata.safetensors");
  for (const value of [1, null, { nested: "x" }, ["a"], true]) {
    assertThrowsLLTM(
      () => saveCheckpoint(path, { t }, { k: value } as unknown as Record<string, string>),
      "INVALID_ARGUMENT",
      /saveCheckpoint: metadata 'k' must be a string/,
    );
    const file = craft({ __metadata__: { k: value }, t: { dtype: "F32", shape: [1], data_offsets: [0, 4] } }, f32(1));
    assertThrowsLLTM(() => load(file), "INVALID_ARGUMENT", /__metadata__ 'k' is .*; metadata values are strings/);
  }
  assertThrowsLLTM(() => load(craft({ __metadata__: ["x"] })), "INVALID_ARGUMENT", /__metadata__ is not an object of strings/);
  assertThrowsLLTM(() => saveCheckpoint(path, { t, u: 3 as unknown as Tensor }), "INVALID_ARGUMENT", /'u' must be a Tensor/);
});

test("the header is padded with spaces to a multiple of 8 bytes, counted in UTF-8 bytes", () => {
  for (const name of ["t", "größe", "重み", "w".repeat(13)]) {
    const path = join(dir, "padded.safetensors");
    using t = Tensor.fromArray([1, 2, 3]);
    saveCheckpoint(path, { [name]: t }, { note: "é".repeat(name.length) });
    const bytes = new Uint8Array(readFileSync(path));
    const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
    assertEquals(n % 8, 0, name);
    assertEquals(bytes.length - 8 - n, 12, `${name}: the data follows the header`);
    const text = new TextDecoder().decode(bytes.subarray(8, 8 + n));
    assert(/^\{.*\} *$/.test(text), `padded with spaces: ${JSON.stringify(text)}`);
    const { tensors } = loadCheckpoint(path);
    assertEquals(tensors[name]!.toArray(), [1, 2, 3]);
    tensors[name]!.dispose();
  }
});

test("a tensor of another dtype (an I64 step counter) is refused by name, or skipped on request", () => {
  const step = new Uint8Array(new BigInt64Array([7n]).buffer);
  const data = new Uint8Array([...step, ...f32(1, 2)]);
  const file = craft({
    step: { dtype: "I64", shape: [], data_offsets: [0, 8] },
    w: { dtype: "F32", shape: [2], data_offsets: [8, 16] },
  }, data);
  assertThrowsLLTM(() => load(file), "INVALID_DTYPE", /'step' is I64; lltm tensors are F32, F64, BF16, F16, I32 \(pass \{ nonFloat: "skip" \}/);
  const { tensors, skipped } = load(file, { nonFloat: "skip" });
  assertEquals(Object.keys(tensors), ["w"]);
  assertEquals(tensors.w!.toArray(), [1, 2]);
  assertEquals(skipped, [{ name: "step", dtype: "I64", shape: [] }]);
  tensors.w!.dispose();
  // A skipped tensor's range still counts: a file that lies about it is refused.
  const lying = craft({ step: { dtype: "I64", shape: [2], data_offsets: [0, 8] }, w: { dtype: "F32", shape: [2], data_offsets: [8, 16] } }, data);
  assertThrowsLLTM(() => load(lying, { nonFloat: "skip" }), "INVALID_ARGUMENT", /'step' has data_offsets \[0, 8\]/);
  const scalar = craft({ s: { dtype: "F32", shape: [], data_offsets: [0, 4] } }, f32(1));
  assertThrowsLLTM(() => load(scalar), "INVALID_SHAPE", /'s' has shape \[\]; lltm tensors have 1 to 4 positive sizes/);
  assertThrowsLLTM(() => load(file, { nonFloat: "keep" as "skip" }), "INVALID_ARGUMENT", /nonFloat must be "error" or "skip"/);
});

test("a missing file is an LLTMError with code IO naming it", () => {
  assertThrowsLLTM(() => loadCheckpoint(join(dir, "missing.safetensors")), "IO", /loadCheckpoint: .*missing\.safetensors: ENOENT/);
});

test("a save is atomic and leaves no temporary file, also when it fails", () => {
  const sub = mkdtempSync(join(dir, "atomic-"));
  using t = Tensor.fromArray([1, 2]);
  const path = join(sub, "model.safetensors");
  saveCheckpoint(path, { t });
  saveCheckpoint(path, { t });
  assertEquals(readdirSync(sub), ["model.safetensors"]);
  // The rename fails (the target is a folder): the temporary file is removed, the error names the path.
  const folder = join(sub, "folder.safetensors");
  mkdirSync(join(folder, "inside"), { recursive: true });
  assertThrowsLLTM(() => saveCheckpoint(folder, { t }), "IO", /saveCheckpoint: .*folder\.safetensors: E/);
  assertEquals(readdirSync(sub).sort(), ["folder.safetensors", "model.safetensors"]);
  assertThrowsLLTM(() => saveCheckpoint(join(sub, "no", "such", "x.safetensors"), { t }), "IO", /ENOENT/);
});

test("a save killed midway leaves a temporary file that the next save of that file removes", async () => {
  const sub = mkdtempSync(join(dir, "killed-"));
  const path = join(sub, "big.safetensors");
  const temporaries = () => readdirSync(sub).filter((n) => n.includes(".tmp."));
  // The kill can land between two saves (nothing half-written); then the child is started again.
  for (let attempt = 0; attempt < 5 && temporaries().length === 0; attempt++) {
    const child = startChild(testFile("save_forever.ts"), [path]);
    const exited = new Promise((r) => child.once("exit", r));
    try {
      const deadline = Date.now() + 60_000;
      while (temporaries().length === 0) {
        if (Date.now() > deadline) throw new Error("the child never started a save");
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      // Killed on every path: a failing wait must not leave it writing 64 MiB files forever.
      child.kill("SIGKILL");
      await exited;
    }
  }
  assert(temporaries().length === 1, `the killed save left its temporary file: ${readdirSync(sub).join(", ")}`);
  using t = Tensor.fromArray([1]);
  saveCheckpoint(path, { t });
  assertEquals(readdirSync(sub), ["big.safetensors"]);
});
