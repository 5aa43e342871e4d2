/** What the distributed tests' ranks must print: the host computation of each collective, and one process's training. */
import { type DeviceLike, dtypes, SGD } from "../../ts/index.ts";
import { assert, assertEquals } from "../harness.ts";
import { distance, norm } from "../helpers.ts";
import { ELEMENTS, rankValues, reduced } from "./inputs.ts";
import { batchOf, makeModel, stepLoss } from "./model.ts";

/** What every rank must hold after each collective of tests/distributed/worker.ts, computed on the host. */
export function expectedCollectives(dtype: (typeof dtypes)[number], rank: number, worldSize: number): Record<string, number[]> {
  const out: Record<string, number[]> = { sum: reduced(dtype, worldSize, "sum") };
  if (dtype !== "int32") out.mean = reduced(dtype, worldSize, "mean");
  out.broadcast = rankValues(dtype, worldSize - 1);
  out.allGather = Array.from({ length: worldSize }, (_, r) => rankValues(dtype, r)).flat();
  const share = ELEMENTS / worldSize;
  out.reduceScatter = out.sum!.slice(rank * share, (rank + 1) * share);
  return out;
}

/** One process's training on the combined batch of `ranks` ranks of `batch` each: what DDP must reproduce. */
export function trainCombined(steps: number, ranks: number, batch: number, device: DeviceLike): Record<string, number[]> {
  using model = makeModel(0, device);
  using optimizer = new SGD(model.parameters(), { lr: 0.1, momentum: 0.9 });
  for (let step = 0; step < steps; step++) {
    optimizer.zeroGrad();
    using loss = stepLoss(model, batchOf(step * ranks * batch, ranks * batch, device));
    loss.backward();
    optimizer.step();
  }
  return Object.fromEntries(model.namedParameters().map(([n, t]) => [n, [...t.toTypedArray()]]));
}

export function assertSameParameters(got: Record<string, number[]>, want: Record<string, number[]>, what: string): void {
  assertEquals(Object.keys(got), Object.keys(want), what);
  for (const name of Object.keys(want)) {
    // float32 sums in another order (per rank, then across ranks): relative 1e-5 of the parameter's norm.
    const error = distance(got[name]!, want[name]!) / norm(want[name]!);
    assert(error < 1e-5, `${what}: '${name}' differs by ${error} (relative)`);
  }
}

