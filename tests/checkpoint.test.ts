/** safetensors checkpoints: round trips, and clear errors for bad files. */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import fc from "fast-check";

import { type DType, LLTM, loadCheckpoint, saveCheckpoint, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";

const dir = mkdtempSync(join(tmpdir(), "lltm-checkpoint-"));

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
  using a = new LLTM(3, 4, { seed: 1 });
  a.save(path);
  using b = new LLTM(3, 4, { seed: 2 });
  b.load(path);
  assertEquals(Array.from(b.weights.toTypedArray()), Array.from(a.weights.toTypedArray()));
  using wrongSize = new LLTM(3, 5);
  assertThrowsLLTM(() => wrongSize.load(path), "SHAPE_MISMATCH", /'weights' has shape \[12, 7\], the module needs \[15, 8\]/);
  using wrongType = new LLTM(3, 4, { dtype: "float64" });
  assertThrowsLLTM(() => wrongType.load(path), "INVALID_DTYPE", /'weights' is float32, the module is float64/);
  const other = join(dir, "other.safetensors");
  using w = Tensor.zeros([12, 7]);
  saveCheckpoint(other, { w });
  assertThrowsLLTM(() => b.load(other), "INVALID_ARGUMENT", /has no tensor 'weights'/);
  assert(b.weights.toTypedArray().every((v, i) => v === a.weights.toTypedArray()[i]), "a failed load changes nothing");
});
