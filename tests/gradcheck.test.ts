/** Analytic gradients against central finite differences, in float64. */
import fc from "fast-check";

import { gradcheck } from "../ts/index.ts";
import { assert, cudaSkipReason, test } from "./harness.ts";

const sizes = fc.record({
  batch: fc.integer({ min: 1, max: 4 }),
  features: fc.integer({ min: 1, max: 5 }),
  state: fc.integer({ min: 1, max: 5 }),
  seed: fc.integer({ min: 0, max: 1000 }),
});

for (const device of ["cpu", "cuda"] as const) {
  test(`gradients match finite differences in float64 on ${device}`, () => {
    fc.assert(
      fc.property(sizes, (s) => {
        const { errors, maxError } = gradcheck({ ...s, device });
        assert(maxError <= 1e-6, `${JSON.stringify(s)}: ${JSON.stringify(errors)}`);
      }),
      { numRuns: 8 },
    );
  }, { skip: device === "cuda" && cudaSkipReason() });
}
