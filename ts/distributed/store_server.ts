/**
 * The TCP store's server, run by the master (rank 0) as torch.distributed's
 * TCPStore is: keys and values for the rendezvous (the NCCL unique id), and
 * the all-gather rounds the CPU process group's collectives are made of.
 * A client announces its rank (HELLO); when its connection closes, every
 * round still waiting for that rank fails at once naming it, so that the
 * others do not wait for a process that is gone.
 */
import * as net from "node:net";

import { frame, FrameReader, Op, parseRequest, readF64, readU32, Reply, u32, utf8 } from "./store_protocol.ts";

interface Waiter {
  socket: net.Socket;
  id: number;
}

interface Round {
  world: number;
  payloads: Map<number, Uint8Array>;
  waiters: Map<number, Waiter>;
}

export class StoreServer {
  private readonly values = new Map<string, Uint8Array>();
  private readonly getters = new Map<string, Waiter[]>();
  private readonly rounds = new Map<string, Round>();
  /** Ranks whose connection closed, with why. */
  private readonly gone = new Map<number, string>();
  private readonly sockets = new Set<net.Socket>();
  private closed = false;
  private readonly server: net.Server;
  readonly port: number;

  private constructor(server: net.Server, port: number) {
    this.server = server;
    this.port = port;
  }

  /** Listens on `host`:`port` (0: a free port, read back from `port`). */
  static listen(host: string, port: number): Promise<StoreServer> {
    return new Promise((resolve, reject) => {
      const server = net.createServer();
      server.once("error", (e) => reject(e));
      server.listen({ host, port }, () => {
        const address = server.address();
        const bound = typeof address === "object" && address !== null ? address.port : port;
        const store = new StoreServer(server, bound);
        // The clients' pending requests keep the processes alive, the master's included.
        server.unref();
        server.on("connection", (socket) => store.accept(socket));
        resolve(store);
      });
    });
  }

  /** Stops listening and drops every connection. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    socket.setNoDelay(true);
    socket.unref();
    this.sockets.add(socket);
    const ranks = new Set<number>();
    const reader = new FrameReader((id, body) => this.handle(socket, ranks, id, body));
    socket.on("data", (chunk: Uint8Array) => reader.feed(chunk));
    socket.on("error", () => {});
    socket.on("close", () => {
      this.sockets.delete(socket);
      for (const rank of ranks) this.lose(rank, `rank ${rank} left: its connection to the store closed (the process ended or failed)`);
    });
  }

  private handle(socket: net.Socket, ranks: Set<number>, id: number, body: Uint8Array): void {
    const { op, key, value } = parseRequest(body);
    switch (op) {
      case Op.HELLO:
        ranks.add(readU32(value, 0));
        return reply(socket, id, Reply.OK, new Uint8Array(0));
      case Op.SET: {
        const copy = new Uint8Array(value);
        this.values.set(key, copy);
        for (const w of this.getters.get(key) ?? []) reply(w.socket, w.id, Reply.OK, copy);
        this.getters.delete(key);
        return reply(socket, id, Reply.OK, new Uint8Array(0));
      }
      case Op.GET: {
        const have = this.values.get(key);
        if (have !== undefined) return reply(socket, id, Reply.OK, have);
        const list = this.getters.get(key) ?? [];
        list.push({ socket, id });
        this.getters.set(key, list);
        return;
      }
      case Op.ADD: {
        const before = this.values.get(key);
        const sum = (before === undefined ? 0 : readF64(before, 0)) + readF64(value, 0);
        const bytes = new Uint8Array(8);
        new DataView(bytes.buffer).setFloat64(0, sum, true);
        this.values.set(key, bytes);
        return reply(socket, id, Reply.OK, bytes);
      }
      case Op.EXCHANGE:
        return this.exchange(socket, id, key, readU32(value, 0), readU32(value, 4), value.subarray(8));
      default:
        return reply(socket, id, Reply.ERROR, utf8(`unknown store op ${op}`));
    }
  }

  private exchange(socket: net.Socket, id: number, key: string, rank: number, world: number, payload: Uint8Array): void {
    const lost = [...this.gone.entries()].find(([r]) => r < world && r !== rank);
    if (lost !== undefined) return reply(socket, id, Reply.ERROR, utf8(lost[1]));
    let round = this.rounds.get(key);
    if (round === undefined) this.rounds.set(key, round = { world, payloads: new Map(), waiters: new Map() });
    if (round.world !== world) {
      return reply(socket, id, Reply.ERROR, utf8(`'${key}': rank ${rank} gave world size ${world}, another rank ${round.world}`));
    }
    if (round.payloads.has(rank)) return reply(socket, id, Reply.ERROR, utf8(`'${key}': rank ${rank} took part twice`));
    round.payloads.set(rank, new Uint8Array(payload));
    round.waiters.set(rank, { socket, id });
    if (round.payloads.size < world) return;
    this.rounds.delete(key);
    const parts: Uint8Array[] = [];
    for (let r = 0; r < world; r++) {
      const p = round.payloads.get(r)!;
      parts.push(u32(p.byteLength), p);
    }
    // Rank 0, whose process runs this server, is answered last, once the others' answers have left it: it may
    // block its event loop right after (NCCL's communicator start), and its runtime may write sockets from that loop.
    const answer = (w: Waiter, done?: () => void) => w.socket.write(frame(w.id, [Uint8Array.of(Reply.OK), ...parts]), done);
    const master = round.waiters.get(0);
    let left = round.waiters.size - (master === undefined ? 0 : 1);
    const last = () => {
      if (--left === 0 && master !== undefined) answer(master);
    };
    if (left === 0 && master !== undefined) answer(master);
    for (const [r, w] of round.waiters) if (r !== 0) answer(w, last);
  }

  private lose(rank: number, why: string): void {
    if (this.closed || this.gone.has(rank)) return;
    this.gone.set(rank, why);
    for (const [key, round] of this.rounds) {
      if (rank >= round.world || round.payloads.has(rank)) continue;
      for (const w of round.waiters.values()) reply(w.socket, w.id, Reply.ERROR, utf8(why));
      this.rounds.delete(key);
    }
  }
}

function reply(socket: net.Socket, id: number, status: number, bytes: Uint8Array): void {
  if (!socket.destroyed) socket.write(frame(id, [Uint8Array.of(status), bytes]));
}
