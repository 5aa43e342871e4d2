/** A Tensor prints its dtype, device, shape and values under every runtime's inspector, not its internals. */
import { inspect } from "node:util";

import { Tensor } from "../ts/index.ts";
import { assert, assertEquals, test } from "./harness.ts";

type Inspector = (value: unknown) => string;

/** node:util's inspect, and the runtime's own inspector where it has one. */
function inspectors(): [string, Inspector][] {
  const all: [string, Inspector][] = [["node:util inspect", (v) => inspect(v)]];
  const g = globalThis as { Bun?: { inspect: Inspector }; Deno?: { inspect: Inspector } };
  if (g.Bun) all.push(["Bun.inspect", (v) => g.Bun!.inspect(v)]);
  if (g.Deno) all.push(["Deno.inspect", (v) => g.Deno!.inspect(v)]);
  return all;
}

test("a tensor prints as its dtype, device, shape and values", () => {
  using t = Tensor.fromArray([[1, 2.5, -3], [4, 5, 6]], { dtype: "float64" });
  using v = Tensor.fromArray([0.25, -1], { dtype: "float32" });
  for (const [name, show] of inspectors()) {
    assertEquals(show(t), "Tensor(float64, cpu, [2, 3])\n[[1., 2.5, -3.],\n [4., 5., 6.]]", name);
    assertEquals(show(v), "Tensor(float32, cpu, [2]) [0.25, -1.]", name);
  }
});

test("a large tensor prints summarised, and a disposed one says so", () => {
  using big = Tensor.zeros([50, 60]);
  const gone = Tensor.zeros([3]);
  gone.dispose();
  for (const [name, show] of inspectors()) {
    const text = show(big);
    assert(text.startsWith("Tensor(float32, cpu, [50, 60])\n[[0., 0., 0., ..., 0., 0., 0.],"), `${name}: ${text}`);
    assertEquals(text.split("\n").length, 8, `${name}: the heading, three rows, the ellipsis, three rows`);
    assert(!/storage|refs|isDisposed/.test(text), `${name} shows internals: ${text}`);
    assertEquals(show(gone), "Tensor(float32, cpu, [3], disposed)", name);
  }
});
