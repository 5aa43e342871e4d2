/**
 * The TCP store's wire format, shared by its server and client. Every
 * message is one frame: u32 length of what follows, u32 request id, then the
 * body. A request's body is u8 op, u32 key length, the key (UTF-8), then the
 * op's value bytes; a reply's body is u8 status (Reply) and its bytes (the
 * value, or a UTF-8 message). Integers are little-endian. Replies carry their
 * request's id because a GET or an EXCHANGE may wait while later requests on
 * the same connection are answered.
 */

/** What a request asks of the store. */
export const Op = {
  /** Announces the rank of the connection's process (value: u32 rank), so that its loss can be named. */
  HELLO: 1,
  /** Stores the value under the key. */
  SET: 2,
  /** Answers the key's value, waiting until some client has set it. */
  GET: 3,
  /** Adds a float64 (value: f64) to the key's number (0 when unset) and answers the sum as f64. */
  ADD: 4,
  /**
   * One round of an all-gather (value: u32 rank, u32 world size, payload): answered, to every
   * participant, once all `world size` ranks have sent theirs for the key, with every payload in
   * rank order (each as u32 length then bytes). The round is then forgotten.
   */
  EXCHANGE: 5,
} as const;

export type OpCode = (typeof Op)[keyof typeof Op];

export const Reply = { OK: 0, ERROR: 1 } as const;

/** The header bytes before a frame's body: the length and the id. */
export const HEADER_BYTES = 8;

/** The largest body a frame may carry (its length is a u32). */
export const MAX_FRAME_BYTES = 0xffff_ffff - 4;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

export function text(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** One frame from an id and the parts of its body. */
export function frame(id: number, parts: readonly Uint8Array[]): Uint8Array {
  let body = 0;
  for (const p of parts) body += p.byteLength;
  if (body + 4 > MAX_FRAME_BYTES) throw new RangeError(`a store message of ${body} bytes exceeds the ${MAX_FRAME_BYTES}-byte frame limit`);
  const out = new Uint8Array(HEADER_BYTES + body);
  const view = new DataView(out.buffer);
  view.setUint32(0, body + 4, true);
  view.setUint32(4, id, true);
  let at = HEADER_BYTES;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

export function u32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value, true);
  return out;
}

export function f64(value: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setFloat64(0, value, true);
  return out;
}

export function readU32(bytes: Uint8Array, at: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(at, true);
}

export function readF64(bytes: Uint8Array, at: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getFloat64(at, true);
}

/** A request's body: op, key and value. */
export function requestBody(op: OpCode, key: string, value: Uint8Array): Uint8Array[] {
  const k = utf8(key);
  return [Uint8Array.of(op), u32(k.byteLength), k, value];
}

/** A request read back: its op, key and value. */
export function parseRequest(body: Uint8Array): { op: number; key: string; value: Uint8Array } {
  const keyBytes = readU32(body, 1);
  return { op: body[0]!, key: text(body.subarray(5, 5 + keyBytes)), value: body.subarray(5 + keyBytes) };
}

/** The payloads of an EXCHANGE reply, in rank order. */
export function splitPayloads(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.byteLength) {
    const n = readU32(bytes, at);
    out.push(bytes.subarray(at + 4, at + 4 + n));
    at += 4 + n;
  }
  return out;
}

/**
 * Cuts a byte stream into frames: feed() the chunks as they arrive, and it calls
 * `onFrame(id, body)` for each whole frame.
 */
export class FrameReader {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private readonly onFrame: (id: number, body: Uint8Array) => void;

  constructor(onFrame: (id: number, body: Uint8Array) => void) {
    this.onFrame = onFrame;
  }

  feed(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.buffered += chunk.byteLength;
    while (this.buffered >= 4) {
      const head = this.take(4, false);
      const length = readU32(head, 0);
      if (this.buffered < 4 + length) return;
      const whole = this.take(4 + length, true);
      this.onFrame(readU32(whole, 4), whole.subarray(HEADER_BYTES));
    }
  }

  /** The first `n` buffered bytes, removed from the buffer when `consume`. */
  private take(n: number, consume: boolean): Uint8Array {
    let joined: Uint8Array;
    if (this.chunks[0]!.byteLength >= n) joined = this.chunks[0]!;
    else {
      joined = new Uint8Array(this.buffered);
      let at = 0;
      for (const c of this.chunks) {
        joined.set(c, at);
        at += c.byteLength;
      }
      this.chunks = [joined];
    }
    const out = joined.subarray(0, n);
    if (consume) {
      const rest = joined.subarray(n);
      this.chunks = rest.byteLength > 0 ? [rest] : [];
      this.buffered -= n;
    }
    return out;
  }
}
