/**
 * TCPStore: a small key-value store on the master, as torch.distributed's.
 * Rank 0 (`isMaster`) runs the server in its own process; every rank,
 * the master included, talks to it through a client connection. It carries
 * the NCCL unique id at start-up and the CPU process group's collectives
 * (EXCHANGE rounds). Works on node:net, which Bun, Deno (with --allow-net)
 * and Node all provide.
 */
import * as net from "node:net";

import { LLTMError } from "../errors.ts";
import { StoreServer } from "./store_server.ts";
import {
  f64, frame, FrameReader, Op, type OpCode, readF64, Reply, requestBody, splitPayloads, text, u32,
} from "./store_protocol.ts";

export interface TCPStoreOptions {
  host: string;
  port: number;
  /** Run the server in this process (rank 0). */
  isMaster: boolean;
  /** This process's rank, announced to the server so that its loss is reported by rank. */
  rank?: number;
  /** How long to keep trying to reach the server, and how long one request may wait (default 300 s). */
  timeoutMs?: number;
}

interface Pending {
  resolve(bytes: Uint8Array): void;
  reject(e: Error): void;
  timer: ReturnType<typeof setTimeout>;
  what: string;
}

const DEFAULT_TIMEOUT_MS = 300_000;

export class TCPStore {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private failure: Error | undefined;
  private closing = false;
  private readonly socket: net.Socket;
  private readonly server: StoreServer | undefined;
  readonly host: string;
  readonly port: number;
  readonly timeoutMs: number;

  private constructor(socket: net.Socket, server: StoreServer | undefined, host: string, port: number, timeoutMs: number) {
    this.socket = socket;
    this.server = server;
    this.host = host;
    this.port = port;
    this.timeoutMs = timeoutMs;
    const reader = new FrameReader((id, body) => this.settle(id, body));
    socket.on("data", (chunk: Uint8Array) => reader.feed(chunk));
    socket.on("error", (e) => this.fail(e));
    socket.on("close", () => this.fail(new Error("the connection closed")));
    // Idle, the connection does not keep the process alive (a request holds it: see request()).
    socket.unref();
  }

  /** Starts the server (on the master) and connects to it, retrying until it answers or the timeout passes. */
  static async connect(options: TCPStoreOptions): Promise<TCPStore> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const where = `${options.host}:${options.port}`;
    let server: StoreServer | undefined;
    if (options.isMaster) {
      try {
        server = await StoreServer.listen(options.host, options.port);
      } catch (e) {
        throw new LLTMError("INVALID_ARGUMENT", `TCPStore: the master cannot listen on ${where}: ${(e as Error).message}`);
      }
    }
    const port = server?.port ?? options.port;
    const socket = await reach(options.host, port, timeoutMs).catch(async (e: Error) => {
      await server?.close();
      throw new LLTMError("INVALID_ARGUMENT", `TCPStore: cannot reach the store at ${options.host}:${port} within ${timeoutMs} ms: ${e.message}`);
    });
    const store = new TCPStore(socket, server, options.host, port, timeoutMs);
    if (options.rank !== undefined) await store.request(Op.HELLO, "", u32(options.rank), "hello");
    return store;
  }

  /** Stores `value` under `key` (strings are stored as UTF-8). */
  async set(key: string, value: Uint8Array | string): Promise<void> {
    await this.request(Op.SET, key, typeof value === "string" ? new TextEncoder().encode(value) : value, `set('${key}')`);
  }

  /** The value of `key`, waiting until some rank has set it. */
  get(key: string): Promise<Uint8Array> {
    return this.request(Op.GET, key, new Uint8Array(0), `get('${key}')`);
  }

  /** Adds `delta` to the number under `key` (0 when unset) and returns the sum. */
  async add(key: string, delta: number): Promise<number> {
    return readF64(await this.request(Op.ADD, key, f64(delta), `add('${key}')`), 0);
  }

  /** One all-gather round named `key`: every rank's payload, in rank order, once all `world` have given theirs. */
  async exchange(key: string, rank: number, world: number, payload: Uint8Array): Promise<Uint8Array[]> {
    const head = new Uint8Array(8);
    head.set(u32(rank), 0);
    head.set(u32(world), 4);
    const value = new Uint8Array(8 + payload.byteLength);
    value.set(head, 0);
    value.set(payload, 8);
    return splitPayloads(await this.request(Op.EXCHANGE, key, value, `exchange('${key}')`));
  }

  /** Closes the connection, and the server on the master. */
  async close(): Promise<void> {
    this.closing = true;
    this.socket.destroy();
    await this.server?.close();
  }

  private request(op: OpCode, key: string, value: Uint8Array, what: string): Promise<Uint8Array> {
    if (this.failure !== undefined) return Promise.reject(this.lost(what, this.failure));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        if (this.pending.size === 0) this.socket.unref();
        reject(new LLTMError("INTERNAL", `TCPStore.${what}: no answer from the store at ${this.host}:${this.port} within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer, what });
      this.socket.ref();
      this.socket.write(frame(id, requestBody(op, key, value)));
    });
  }

  private settle(id: number, body: Uint8Array): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (this.pending.size === 0) this.socket.unref();
    if (body[0] === Reply.OK) p.resolve(body.subarray(1));
    else p.reject(new LLTMError("INTERNAL", `TCPStore.${p.what}: ${text(body.subarray(1))}`));
  }

  private fail(e: Error): void {
    if (this.failure !== undefined) return;
    this.failure = e;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(this.lost(p.what, e));
    }
    this.pending.clear();
  }

  private lost(what: string, e: Error): LLTMError {
    if (this.closing) return new LLTMError("INVALID_ARGUMENT", `TCPStore.${what}: the store has been closed`);
    return new LLTMError(
      "INTERNAL",
      `TCPStore.${what}: lost the store at ${this.host}:${this.port} (rank 0's process, which runs it, ended or failed): ${e.message}`,
    );
  }
}

/** A connected socket to host:port, retrying refused connections (the master may not listen yet) until `timeoutMs`. */
async function reach(host: string, port: number, timeoutMs: number): Promise<net.Socket> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect({ host, port });
        socket.once("connect", () => {
          socket.off("error", reject);
          socket.setNoDelay(true);
          resolve(socket);
        });
        socket.once("error", reject);
      });
    } catch (e) {
      if (Date.now() >= deadline) throw e as Error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
