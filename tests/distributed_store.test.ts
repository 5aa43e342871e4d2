/**
 * The TCP store: set and get (a get waits for the set), add, exchange rounds
 * in rank order, a rank that leaves failing the rounds that wait for it by
 * name, and a client that cannot reach the master giving up with a message.
 */
import { TCPStore } from "../ts/distributed/store.ts";
import { LLTMError } from "../ts/index.ts";
import { assert, assertEquals, test } from "./harness.ts";

const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** The error `p` rejects with, as "Name: message" (handled at once, so that no runner sees an unhandled rejection). */
function failure(p: Promise<unknown>): Promise<string> {
  return p.then(() => "resolved", (e: unknown) => e instanceof LLTMError ? `LLTMError: ${e.message}` : String(e));
}

async function stores(n: number): Promise<TCPStore[]> {
  const master = await TCPStore.connect({ host: "127.0.0.1", port: 0, isMaster: true, rank: 0, timeoutMs: 10_000 });
  const others = await Promise.all(
    Array.from({ length: n - 1 }, (_, i) => TCPStore.connect({ host: "127.0.0.1", port: master.port, isMaster: false, rank: i + 1, timeoutMs: 10_000 })),
  );
  return [master, ...others];
}

test("TCPStore: a get waits for the set; add counts; values are bytes", async () => {
  const [a, b] = await stores(2);
  try {
    const waiting = b!.get("id");
    await a!.set("id", "unique");
    assertEquals(text(await waiting), "unique");
    assertEquals(text(await a!.get("id")), "unique");
    await b!.set("bytes", Uint8Array.of(0, 255, 7));
    assertEquals([...(await a!.get("bytes"))], [0, 255, 7]);
    assertEquals(await a!.add("count", 2), 2);
    assertEquals(await b!.add("count", 3), 5);
  } finally {
    await b!.close();
    await a!.close();
  }
});

test("TCPStore: an exchange answers every rank with all payloads in rank order, large ones included", async () => {
  const s = await stores(3);
  try {
    const big = new Uint8Array(3_000_000).map((_, i) => i % 251);
    const answers = await Promise.all([
      s[2]!.exchange("round", 2, 3, Uint8Array.of(2)),
      s[0]!.exchange("round", 0, 3, big),
      s[1]!.exchange("round", 1, 3, new Uint8Array(0)),
    ]);
    for (const parts of answers) {
      assertEquals(parts.length, 3);
      assertEquals(parts[0]!.byteLength, big.byteLength);
      assert(parts[0]!.every((v, i) => v === i % 251), "the large payload arrived intact");
      assertEquals([parts[1]!.byteLength, [...parts[2]!]], [0, [2]]);
    }
  } finally {
    for (const t of s.reverse()) await t.close();
  }
});

test("TCPStore: a rank whose connection closes fails the rounds waiting for it, naming it", async () => {
  const [a, b, c] = await stores(3);
  try {
    const waiting = [a!.exchange("round", 0, 3, new Uint8Array(0)), b!.exchange("round", 1, 3, new Uint8Array(0))].map(failure);
    await c!.close();
    for (const message of await Promise.all(waiting)) {
      assert(/LLTMError: .*rank 2 left: its connection to the store closed/.test(message), message);
    }
  } finally {
    await b!.close();
    await a!.close();
  }
});

test("TCPStore: the clients see the master's loss, and one that cannot reach a master gives up in time", async () => {
  const [a, b] = await stores(2);
  const waiting = failure(b!.get("never"));
  await a!.close();
  const message = await waiting;
  assert(/lost the store at 127\.0\.0\.1:\d+ \(rank 0's process, which runs it, ended or failed\)/.test(message), message);
  await b!.close();
  const started = Date.now();
  try {
    await TCPStore.connect({ host: "127.0.0.1", port: a!.port, isMaster: false, timeoutMs: 500 });
    throw new Error("connected to nothing");
  } catch (e) {
    assert(/cannot reach the store at 127\.0\.0\.1:\d+ within 500 ms/.test((e as Error).message), (e as Error).message);
  }
  assert(Date.now() - started < 5000, "gave up in time");
});
