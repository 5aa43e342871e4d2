/**
 * Checkpoints in the safetensors format (what safetensors.torch.load_file
 * reads): an 8-byte little-endian header length, a JSON header naming each
 * tensor's dtype, shape and byte range, then the tensors' bytes, row-major.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";

import type { DeviceLike } from "./device.ts";
import type { DType } from "./dtype.ts";
import { LLTMError } from "./errors.ts";
import { Tensor } from "./tensor.ts";

const codes: Record<DType, string> = { float32: "F32", float64: "F64" };
const dtypes: Record<string, DType> = { F32: "float32", F64: "float64" };

interface Entry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

/** Writes `tensors` (copied to the host) to `path`, atomically: a reader never sees half a file. */
export function saveCheckpoint(path: string, tensors: Record<string, Tensor>, metadata: Record<string, string> = {}): void {
  const header: Record<string, unknown> = { __metadata__: metadata };
  const chunks: Uint8Array[] = [];
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    if (name === "__metadata__") throw new LLTMError("INVALID_ARGUMENT", "saveCheckpoint: '__metadata__' is reserved");
    const values = t.toTypedArray();
    const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    header[name] = { dtype: codes[t.dtype], shape: [...t.shape], data_offsets: [offset, offset + bytes.length] };
    chunks.push(bytes);
    offset += bytes.length;
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - (json.length % 8)) % 8);
  const head = new TextEncoder().encode(json);
  const file = new Uint8Array(8 + head.length + offset);
  new DataView(file.buffer).setBigUint64(0, BigInt(head.length), true);
  file.set(head, 8);
  let at = 8 + head.length;
  for (const c of chunks) {
    file.set(c, at);
    at += c.length;
  }
  const temporary = `${path}.tmp-${Date.now()}-${Math.floor(Math.random() * 1e9)}`;
  writeFileSync(temporary, file);
  renameSync(temporary, path);
}

/** Reads a checkpoint written by saveCheckpoint or by safetensors; every tensor is validated before any is made. */
export function loadCheckpoint(path: string, options: { device?: DeviceLike } = {}): {
  tensors: Record<string, Tensor>;
  metadata: Record<string, string>;
} {
  const bad = (why: string): never => {
    throw new LLTMError("INVALID_ARGUMENT", `loadCheckpoint: ${path}: ${why}`);
  };
  const file = new Uint8Array(readFileSync(path));
  if (file.length < 8) bad(`truncated: ${file.length} bytes, shorter than the 8-byte header length`);
  const headerLength = new DataView(file.buffer, file.byteOffset, file.byteLength).getBigUint64(0, true);
  if (headerLength > BigInt(file.length - 8)) bad(`truncated: the header needs ${headerLength} bytes, the file has ${file.length - 8} after the length`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(file.subarray(8, 8 + Number(headerLength))));
  } catch (e) {
    return bad(`the header is not valid JSON (${(e as Error).message})`);
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) bad("the header is not a JSON object");
  const data = file.subarray(8 + Number(headerLength));
  const entries: [string, Entry][] = [];
  for (const [name, value] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const e = value as Entry;
    if (typeof e !== "object" || e === null) bad(`'${name}' is not a tensor entry`);
    if (!(e.dtype in dtypes)) bad(`'${name}' has dtype ${JSON.stringify(e.dtype)}; lltm reads F32 and F64`);
    if (!Array.isArray(e.shape) || e.shape.length < 1 || e.shape.length > 4 || !e.shape.every((s) => Number.isSafeInteger(s) && s > 0)) {
      bad(`'${name}' has shape ${JSON.stringify(e.shape)}; expected 1 to 4 positive sizes`);
    }
    const [begin, end] = Array.isArray(e.data_offsets) ? e.data_offsets : [NaN, NaN];
    const size = e.shape.reduce((a, b) => a * b, 1) * (e.dtype === "F32" ? 4 : 8);
    if (!Number.isSafeInteger(begin) || !Number.isSafeInteger(end) || begin < 0 || end - begin !== size) {
      bad(`'${name}' has data_offsets ${JSON.stringify(e.data_offsets)}; expected ${size} bytes`);
    }
    if (end > data.length) bad(`truncated: '${name}' ends at byte ${end} of the data, which has ${data.length}`);
    entries.push([name, e]);
  }
  const tensors: Record<string, Tensor> = {};
  for (const [name, e] of entries) {
    const [begin, end] = e.data_offsets;
    const bytes = data.slice(begin, end);
    const values = e.dtype === "F32" ? new Float32Array(bytes.buffer) : new Float64Array(bytes.buffer);
    tensors[name] = Tensor.fromTypedArray(values, e.shape, { device: options.device });
  }
  const metadata = (header.__metadata__ ?? {}) as Record<string, string>;
  return { tensors, metadata };
}
