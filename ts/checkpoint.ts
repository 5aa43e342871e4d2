/**
 * Checkpoints in the safetensors format (what safetensors.torch.load_file
 * reads): an 8-byte little-endian header length, a JSON header naming each
 * tensor's dtype, shape and byte range, then the tensors' bytes, row-major.
 *
 * The reader holds a file to the reference implementation's rules before it
 * makes any tensor: every field looked up as an own property (a header is
 * untrusted JSON, so names such as "__proto__" or "constructor" are data),
 * sizes computed without rounding, and the tensors' byte ranges disjoint and
 * covering the data exactly. A damaged file gives an LLTMError, never a
 * tensor it did not hold.
 */
import { readFileSync } from "node:fs";

import { ioError, writeFileAtomic } from "./atomic_file.ts";
import type { DeviceLike } from "./device.ts";
import { type DType, storageView } from "./dtype.ts";
import { LLTMError } from "./errors.ts";
import { MAX_DIMS } from "./native/constants.ts";
import { Tensor } from "./tensor/index.ts";

/** The safetensors dtype of each lltm dtype (a Record over DType: a new dtype without one does not compile). */
const floatCodes: Record<DType, string> = { float32: "F32", float64: "F64", bfloat16: "BF16", float16: "F16", int32: "I32" };
const floatTypes = table<DType>(Object.fromEntries(Object.entries(floatCodes).map(([dtype, code]) => [code, dtype as DType])));
const floatNames = Object.values(floatCodes).join(", ");

/** Bytes per element of every whole-byte safetensors dtype, so that a file holding others can be checked and skipped. */
const itemBytes = table<number>({
  BOOL: 1, U8: 1, I8: 1, F8_E5M2: 1, F8_E4M3: 1, F8_E8M0: 1, I16: 2, U16: 2, F16: 2, BF16: 2,
  I32: 4, U32: 4, F32: 4, C64: 8, I64: 8, U64: 8, F64: 8,
});

function table<T>(entries: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, entries);
}

function own(object: object, key: string): unknown {
  return Object.hasOwn(object, key) ? (object as Record<string, unknown>)[key] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export interface LoadCheckpointOptions {
  /** Where the tensors are made (default: the CPU). */
  device?: DeviceLike;
  /**
   * What to do with a tensor of another dtype than F32, F64, BF16, F16 and I32 (an I64 step counter saved by PyTorch, say):
   * "error" (the default) refuses the file naming it, "skip" loads the rest and lists it in `skipped`.
   */
  nonFloat?: "error" | "skip";
}

export interface SkippedTensor {
  name: string;
  dtype: string;
  shape: number[];
}

export interface Checkpoint {
  /** The tensors by name (an object without prototype: every name is an own key, "__proto__" included). */
  tensors: Record<string, Tensor>;
  /** The header's `__metadata__`: string values only. */
  metadata: Record<string, string>;
  /** The tensors left out by `nonFloat: "skip"`. */
  skipped: SkippedTensor[];
}

interface Entry {
  name: string;
  dtype: string;
  shape: number[];
  begin: number;
  end: number;
}

/**
 * Writes `tensors` (copied to the host) and string `metadata` to `path`, atomically and durably: a reader sees
 * the old file or the new one, and the new one survives a power cut once this returns.
 */
export function saveCheckpoint(path: string, tensors: Record<string, Tensor>, metadata: Record<string, string> = {}): void {
  const bad = (why: string): never => {
    throw new LLTMError("INVALID_ARGUMENT", `saveCheckpoint: ${why}`);
  };
  if (typeof path !== "string" || path === "") bad(`path must be a file name, got ${JSON.stringify(path)}`);
  if (!isRecord(tensors)) bad("tensors must be an object of named tensors");
  if (!isRecord(metadata)) bad("metadata must be an object of strings");
  const header = Object.create(null) as Record<string, unknown>;
  const meta = Object.create(null) as Record<string, string>;
  for (const key of Object.keys(metadata)) {
    const value = own(metadata, key);
    if (typeof value !== "string") bad(`metadata '${key}' must be a string (safetensors holds strings only), got ${typeof value}`);
    meta[key] = value as string;
  }
  if (Object.keys(meta).length > 0) header.__metadata__ = meta;
  const chunks: Uint8Array[] = [];
  let offset = 0;
  for (const name of Object.keys(tensors)) {
    if (name === "__metadata__") bad("'__metadata__' is reserved for the metadata");
    const t = own(tensors, name);
    if (!(t instanceof Tensor)) bad(`'${name}' must be a Tensor`);
    const tensor = t as Tensor;
    // The stored bits, little-endian as the hosts lltm runs on: a half type's 16-bit words as they are.
    const values = tensor.toTypedArray({ raw: true });
    const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    header[name] = { dtype: floatCodes[tensor.dtype], shape: [...tensor.shape], data_offsets: [offset, offset + bytes.length] };
    chunks.push(bytes);
    offset += bytes.length;
  }
  // Padded with spaces to a multiple of 8 bytes, as the reference writer does, so the data starts aligned.
  const json = new TextEncoder().encode(JSON.stringify(header));
  const head = new Uint8Array(json.length + ((8 - (json.length % 8)) % 8)).fill(0x20);
  head.set(json);
  const length = new Uint8Array(8);
  new DataView(length.buffer).setBigUint64(0, BigInt(head.length), true);
  writeFileAtomic("saveCheckpoint", path, [length, head, ...chunks]);
}

/** Reads a checkpoint written by saveCheckpoint or by safetensors; the whole file is validated before any tensor is made. */
export function loadCheckpoint(path: string, options: LoadCheckpointOptions = {}): Checkpoint {
  let file: Uint8Array;
  try {
    file = new Uint8Array(readFileSync(path));
  } catch (e) {
    throw ioError("loadCheckpoint", path, e);
  }
  return decodeCheckpoint(file, options, path);
}

/** Reads a checkpoint from its bytes; `source` names it in errors. */
export function decodeCheckpoint(file: Uint8Array, options: LoadCheckpointOptions = {}, source = "<bytes>"): Checkpoint {
  const nonFloat = options.nonFloat ?? "error";
  if (nonFloat !== "error" && nonFloat !== "skip") {
    throw new LLTMError("INVALID_ARGUMENT", `loadCheckpoint: nonFloat must be "error" or "skip", got ${JSON.stringify(nonFloat)}`);
  }
  const { entries, metadata, data } = parse(file, source);
  const skipped: SkippedTensor[] = [];
  const loadable: Entry[] = [];
  for (const e of entries) {
    if (floatTypes[e.dtype] === undefined) {
      if (nonFloat === "error") {
        throw new LLTMError(
          "INVALID_DTYPE",
          `loadCheckpoint: ${source}: '${e.name}' is ${e.dtype}; lltm tensors are ${floatNames} (pass { nonFloat: "skip" } to load the others)`,
        );
      }
      skipped.push({ name: e.name, dtype: e.dtype, shape: e.shape });
      continue;
    }
    if (e.shape.length < 1 || e.shape.length > MAX_DIMS || e.shape.some((s) => s < 1)) {
      throw new LLTMError(
        "INVALID_SHAPE",
        `loadCheckpoint: ${source}: '${e.name}' has shape [${e.shape.join(", ")}]; lltm tensors have 1 to ${MAX_DIMS} positive sizes`,
      );
    }
    loadable.push(e);
  }
  const tensors = Object.create(null) as Record<string, Tensor>;
  try {
    for (const e of loadable) {
      const bytes = data.slice(e.begin, e.end);
      const dtype = floatTypes[e.dtype]!;
      tensors[e.name] = Tensor.fromTypedArray(storageView(dtype, bytes.buffer), e.shape, { dtype, device: options.device });
    }
  } catch (error) {
    for (const t of Object.values(tensors)) t.dispose();
    throw error;
  }
  return { tensors, metadata, skipped };
}

/** Checks the whole layout of `file`; returns its entries (ranges relative to the data), metadata and data. */
function parse(file: Uint8Array, path: string): { entries: Entry[]; metadata: Record<string, string>; data: Uint8Array } {
  const bad = (why: string): never => {
    throw new LLTMError("INVALID_ARGUMENT", `loadCheckpoint: ${path}: ${why}`);
  };
  if (file.length < 8) bad(`truncated: ${file.length} bytes, shorter than the 8-byte header length`);
  // Compared as a u64: a length near 2^64 must not round to something that fits.
  const headerLength = new DataView(file.buffer, file.byteOffset, file.byteLength).getBigUint64(0, true);
  if (headerLength > BigInt(file.length - 8)) {
    bad(`truncated: the header needs ${headerLength} bytes, the file has ${file.length - 8} after the length`);
  }
  const start = 8 + Number(headerLength);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(file.subarray(8, start)));
  } catch (e) {
    return bad(`the header is not valid JSON (${(e as Error).message})`);
  }
  if (!isRecord(header)) return bad("the header is not a JSON object");
  const dataBytes = file.length - start;

  let metadata = Object.create(null) as Record<string, string>;
  const entries: Entry[] = [];
  for (const name of Object.keys(header)) {
    const value = own(header, name);
    if (name === "__metadata__") {
      metadata = checkMetadata(value, bad);
      continue;
    }
    const what = `'${name}'`;
    if (!isRecord(value)) bad(`${what} is not a tensor entry (an object with dtype, shape and data_offsets)`);
    const entry = value as Record<string, unknown>;
    const dtype = own(entry, "dtype");
    const size = typeof dtype === "string" ? itemBytes[dtype] : undefined;
    if (size === undefined) bad(`${what} has dtype ${JSON.stringify(dtype)}; expected a safetensors dtype such as "F32" or "F64"`);
    const shape = own(entry, "shape");
    if (!Array.isArray(shape) || !shape.every((s) => Number.isSafeInteger(s) && s >= 0)) {
      bad(`${what} has shape ${JSON.stringify(shape)}; expected an array of sizes`);
    }
    const dims = (shape as number[]).map((s) => s + 0); // +0 turns a -0 into 0
    const offsets = own(entry, "data_offsets");
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
      bad(`${what} has data_offsets ${JSON.stringify(offsets)}; expected [begin, end], two byte offsets`);
    }
    const [begin, end] = (offsets as number[]).map((o) => o + 0) as [number, number];
    const bytes = dims.reduce((n, s) => n * BigInt(s), BigInt(size!));
    if (end < begin || BigInt(end - begin) !== bytes) {
      bad(`${what} has data_offsets [${begin}, ${end}]; its shape [${dims.join(", ")}] of ${dtype} needs ${bytes} bytes`);
    }
    if (end > dataBytes) bad(`truncated: ${what} ends at byte ${end} of the data, which has ${dataBytes}`);
    entries.push({ name, dtype: dtype as string, shape: dims, begin, end });
  }

  // As the reference reader: sorted by offset, each range starts where the previous ended, the last ends the file.
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let covered = 0;
  let previous: Entry | undefined;
  for (const e of sorted) {
    if (e.begin < covered) bad(`'${e.name}' (bytes ${e.begin} to ${e.end}) overlaps '${previous!.name}' (bytes ${previous!.begin} to ${previous!.end})`);
    if (e.begin > covered) bad(`bytes ${covered} to ${e.begin} of the data belong to no tensor`);
    covered = e.end;
    previous = e;
  }
  if (covered !== dataBytes) bad(`${dataBytes - covered} trailing bytes after the last tensor`);
  return { entries, metadata, data: file.subarray(start) };
}

function checkMetadata(value: unknown, bad: (why: string) => never): Record<string, string> {
  const metadata = Object.create(null) as Record<string, string>;
  if (value === null) return metadata;
  if (!isRecord(value)) return bad("__metadata__ is not an object of strings");
  for (const key of Object.keys(value)) {
    const v = own(value, key);
    if (typeof v !== "string") bad(`__metadata__ '${key}' is ${JSON.stringify(v)}; metadata values are strings`);
    metadata[key] = v as string;
  }
  return metadata;
}
