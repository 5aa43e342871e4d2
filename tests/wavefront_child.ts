/**
 * The stacked ops run as a wavefront (csrc/stacked_wavefront.h), which the parent forces with
 * LLTM_STACKED_CHUNKS at sizes where the backend would not choose it, against the same layers run one sequence
 * call each: random sizes (T from 1, so that some stacks have fewer steps than chunks), one direction, no
 * lengths (a wavefront runs neither), float64 and float32; then, on CUDA, a captured training step against the
 * eager one (tests/captured_training.ts) and, unforced, a size where the backend chooses the wavefront itself
 * (the device holds both layers' recurrence clusters at once). Exits 1 on the first failure.
 * With `directions`, bidirectional stacks instead (layers 1 to 3, lengths or not), for the parent to run with both
 * directions on lanes of their own.
 * usage: wavefront_child.ts cpu|cuda [directions]
 */
import process from "node:process";

import fc from "fast-check";
import { type DType } from "../ts/index.ts";
import { checkCapturedTraining } from "./captured_training.ts";
import { assertProperty } from "./sequence_helpers.ts";
import { check, stack } from "./stacked_check.ts";

const device = process.argv[2] === "cuda" ? "cuda" : "cpu";
if (process.argv[3] === "directions") {
  // Two directions, each on its own lane where the parent forces it (LLTM_CUDA_KERNELS=directions-at-once), with
  // and without lengths: the lanes meet between layers and before direction 1's input gradient joins direction 0's.
  assertProperty(
    fc.property(
      fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 7 }),
      fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 3 }), fc.constantFrom<DType>("float64", "float32"),
      fc.boolean(), fc.integer({ min: 0, max: 1000 }),
      (T, B, F, S, L, dtype, withLengths, seed) => check(stack(T, B, F, S, L, 2, 16, seed), dtype, device, withLengths, seed),
    ),
    { numRuns: 12, seed: 29 },
  );
  console.log("ok");
  process.exit(0);
}
assertProperty(
  fc.property(
    fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 7 }),
    fc.integer({ min: 1, max: 9 }), fc.integer({ min: 2, max: 4 }), fc.constantFrom(1, 3, 16),
    fc.constantFrom<DType>("float64", "float32"), fc.integer({ min: 0, max: 1000 }),
    (T, B, F, S, L, align, dtype, seed) => check(stack(T, B, F, S, L, 1, align, seed), dtype, device, false, seed),
  ),
  { numRuns: 12, seed: 23 },
);
if (device === "cuda") {
  // The lanes inside a captured step: the fork, the layers' signals and the join become the graph's edges.
  checkCapturedTraining(true);
  if (process.env.LLTM_STACKED_CHUNKS === undefined) check(stack(12, 64, 48, 256, 2, 1, 16, 5), "float32", device, false, 5);
}
console.log("ok");
