/**
 * Adam and AdamW with { capturable: true } (lr and the step count read on the
 * device, the decay fused into the update) against the per-tensor path they
 * replace, step by step, with a schedule, groups, half parameters and a
 * restored state.
 */
import fc from "fast-check";

import { Adam, AdamW, CosineAnnealingLR, type DType, noGrad, Tensor } from "../ts/index.ts";
import { assert, assertThrowsLLTM, test } from "./harness.ts";

const values = (t: Tensor) => Array.from(t.toTypedArray() as ArrayLike<number>);

/** Two copies of the same parameters, each with the same fresh gradients at every step. */
function twins(dtype: DType, sizes: readonly number[], seed: number): [Tensor[], Tensor[]] {
  const make = () => sizes.map((n, i) => Tensor.randn([n], { dtype, seed: seed + i }).requiresGrad_());
  return [make(), make()];
}

function setGrads(params: readonly Tensor[], dtype: DType, seed: number): void {
  params.forEach((p, i) => {
    p.grad?.dispose();
    p.grad = Tensor.randn(p.shape, { dtype, seed: seed * 31 + i });
  });
}

function close(got: readonly number[], want: readonly number[], tol: number, what: string): void {
  got.forEach((v, k) => {
    const w = want[k]!;
    assert(Math.abs(v - w) <= tol * Math.max(1, Math.abs(w)), `${what} [${k}]: ${v} vs ${w}`);
  });
}

for (const [dtype, tol] of [["float64", 1e-12], ["float32", 1e-5]] as const) {
  test(`capturable AdamW follows AdamW step by step under a cosine schedule (${dtype})`, () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 3 }),
        fc.double({ min: 1e-4, max: 0.1, noNaN: true }),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        fc.integer({ min: 0, max: 1000 }),
        (sizes, lr, weightDecay, seed) => {
          const [a, b] = twins(dtype, sizes, seed);
          try {
            using plain = new AdamW(a, { lr, weightDecay });
            using captured = new AdamW(b, { lr, weightDecay, capturable: true });
            const s1 = new CosineAnnealingLR(plain, { tMax: 5 }), s2 = new CosineAnnealingLR(captured, { tMax: 5 });
            for (let step = 0; step < 4; step++) {
              setGrads(a, dtype, seed + step);
              setGrads(b, dtype, seed + step);
              plain.step();
              captured.step();
              s1.step();
              s2.step();
              a.forEach((p, i) => close(values(b[i]!), values(p), tol, `step ${step} parameter ${i}`));
            }
            assert(captured.steps === 4, `steps ${captured.steps}`);
          } finally {
            for (const p of [...a, ...b]) {
              p.grad?.dispose();
              p.dispose();
            }
          }
        },
      ),
      { numRuns: 12 },
    );
  });
}

test("capturable Adam keeps groups apart and resumes from a saved state", () => {
  const [a, b] = twins("float64", [5, 3], 7);
  try {
    const groups = (ps: Tensor[]) => [{ params: [ps[0]!], options: { lr: 0.05 } }, { params: [ps[1]!], options: { lr: 0.2 } }];
    using plain = new Adam(groups(a), { lr: 0.01 });
    using captured = new Adam(groups(b), { lr: 0.01, capturable: true });
    for (let step = 0; step < 3; step++) {
      setGrads(a, "float64", step);
      setGrads(b, "float64", step);
      plain.step();
      captured.step();
    }
    a.forEach((p, i) => close(values(b[i]!), values(p), 1e-12, `group ${i}'s parameter`));
    // A third optimizer, capturable, restored from the plain one's state, continues as it does.
    const [c] = twins("float64", [5, 3], 7);
    noGrad(() => c.forEach((p, i) => p.copyFrom(a[i]!)));
    using restored = new Adam(groups(c), { lr: 0.01, capturable: true });
    restored.loadStateDict(plain.stateDict());
    setGrads(a, "float64", 9);
    setGrads(c, "float64", 9);
    plain.step();
    restored.step();
    a.forEach((p, i) => close(values(c[i]!), values(p), 1e-12, `restored parameter ${i}`));
    for (const p of c) {
      p.grad?.dispose();
      p.dispose();
    }
  } finally {
    for (const p of [...a, ...b]) {
      p.grad?.dispose();
      p.dispose();
    }
  }
});

test("capturable AdamW updates bfloat16 parameters as the per-tensor path does, to bfloat16's precision", () => {
  const [a, b] = twins("bfloat16", [33], 3);
  try {
    using plain = new AdamW(a, { lr: 0.01 });
    using captured = new AdamW(b, { lr: 0.01, capturable: true });
    for (let step = 0; step < 3; step++) {
      setGrads(a, "bfloat16", step);
      setGrads(b, "bfloat16", step);
      plain.step();
      captured.step();
    }
    // Both round the same float32 update to bfloat16 (8 bits of mantissa): one unit in the last place at most.
    close(values(b[0]!), values(a[0]!), 2 ** -7, "bfloat16 parameter");
  } finally {
    for (const p of [...a, ...b]) {
      p.grad?.dispose();
      p.dispose();
    }
  }
});

test("capturable is checked: a boolean, and one compute type and device per group", () => {
  using p = Tensor.randn([3], { seed: 1 }).requiresGrad_();
  using q = Tensor.randn([3], { dtype: "float64", seed: 2 }).requiresGrad_();
  assertThrowsLLTM(() => new Adam([p], { capturable: 1 as unknown as boolean }), "INVALID_ARGUMENT", /Adam: 'capturable' must be a boolean/);
  assertThrowsLLTM(() => new AdamW([p, q], { capturable: true }), "INVALID_ARGUMENT", /AdamW: with capturable, .* one device and compute type/);
  using r = Tensor.randn([3], { dtype: "bfloat16", seed: 3 }).requiresGrad_();
  new AdamW([p, r], { capturable: true }).dispose();
});
