/** Optimizers over modules: AdamW's decoupled decay, parameter groups, parameters without gradients, schedules, checks up front. */
import {
  Adam, AdamW, CosineAnnealingLR, LambdaLR, Linear, SGD, StepLR, Tensor,
} from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";

const f64 = { dtype: "float64" } as const;
const values = (t: Tensor) => Array.from(t.toTypedArray());

/** A float64 leaf with a gradient of known values. */
function leaf(seed: number): Tensor {
  const p = Tensor.randn([7], { ...f64, seed }).requiresGrad_();
  p.grad = Tensor.randn([7], { ...f64, seed: seed + 100 });
  return p;
}

test("AdamW's step is Adam's on the parameter first decayed by lr·weightDecay", () => {
  const lr = 0.05, wd = 0.3;
  using p = leaf(1), q = leaf(1);
  using w = new AdamW([p], { lr, weightDecay: wd });
  using a = new Adam([q], { lr });
  for (let i = 0; i < 3; i++) {
    // q is decayed by hand, then takes Adam's step with the same gradient.
    using decayed = Tensor.fromTypedArray(new Float64Array(values(q).map((v) => v * (1 - lr * wd))), [7]);
    q.requiresGrad_(false).copyFrom(decayed);
    q.requiresGrad_(true);
    a.step();
    w.step();
    const got = values(p), want = values(q);
    got.forEach((v, k) => assert(Math.abs(v - want[k]!) <= 1e-15 * (1 + Math.abs(want[k]!)), `step ${i} [${k}]: ${v} vs ${want[k]}`));
  }
  assertEquals(w.weightDecay, wd);
});

test("parameter groups keep their own hyperparameters; a parameter without a gradient is left alone", () => {
  using a = leaf(1), b = leaf(2);
  using c = Tensor.randn([7], { ...f64, seed: 3 }).requiresGrad_();
  const a0 = values(a), b0 = values(b), c0 = values(c), ga = values(a.grad!);
  using opt = new SGD([{ params: [a], options: { lr: 0.5 } }, { params: [b, c], options: { lr: 0 } }], { lr: 0.1 });
  opt.step();
  values(a).forEach((v, i) => assert(Math.abs(v - (a0[i]! - 0.5 * ga[i]!)) <= 1e-15, `a[${i}]`));
  assertEquals(values(b), b0, "lr 0 group");
  assertEquals(values(c), c0, "no gradient, no move");
  assertEquals(opt.groups.map((g) => g.lr), [0.5, 0]);
  const state = opt.stateDict();
  assertEquals([state.metadata.lr, state.metadata["group1.lr"], state.metadata.groups], ["0.5", "0", "2"]);
});

test("a module's named parameters name the optimizer's state", () => {
  using lin = new Linear(3, 2, { seed: 1 });
  using opt = new AdamW(lin.namedParameters(), { lr: 1e-3 });
  assertEquals(Object.keys(opt.stateDict().tensors).sort(), ["bias.exp_avg", "bias.exp_avg_sq", "weight.exp_avg", "weight.exp_avg_sq"]);
});

test("schedules: StepLR, CosineAnnealingLR and LambdaLR set every group's lr", () => {
  using p = leaf(1), q = leaf(2);
  using opt = new SGD([{ params: [p], options: { lr: 1 } }, { params: [q], options: { lr: 0.5 } }], { lr: 1 });
  const step = new StepLR(opt, { stepSize: 2, gamma: 0.5 });
  const seen: number[][] = [];
  for (let i = 0; i < 4; i++) {
    step.step();
    seen.push(step.lastLr());
  }
  assertEquals(seen, [[1, 0.5], [0.5, 0.25], [0.5, 0.25], [0.25, 0.125]]);
  using r = leaf(3);
  using adam = new Adam([r], { lr: 0.1 });
  const cosine = new CosineAnnealingLR(adam, { tMax: 4, etaMin: 0.02 });
  cosine.step();
  cosine.step();
  assert(Math.abs(adam.lr - 0.06) < 1e-15, `halfway: ${adam.lr}`);
  cosine.step();
  cosine.step();
  assert(Math.abs(adam.lr - 0.02) < 1e-15, `end: ${adam.lr}`);
  const warm = new LambdaLR(adam, (e) => Math.min(1, (e + 1) / 10));
  assert(Math.abs(adam.lr - 0.002) < 1e-15, `warm-up starts at base·factor(0): ${adam.lr}`);
  void warm;
  assertThrowsLLTM(() => new StepLR(opt, { stepSize: 0 }), "INVALID_ARGUMENT", /StepLR: 'stepSize' must be a positive integer, got 0/);
});

test("optimizer options are checked in the constructor, by name", () => {
  using p = leaf(1);
  assertThrowsLLTM(() => new AdamW([p], { lr: -1 }), "INVALID_ARGUMENT", /^AdamW: 'lr' must be in \[0\.000000/);
  assertThrowsLLTM(() => new AdamW([p], { betas: [0.9, 1] }), "INVALID_ARGUMENT", /^AdamW: 'beta2' must be in \[0\.000000, 1\.000000\)/);
  assertThrowsLLTM(() => new AdamW([p], { weightDecay: -0.1 }), "INVALID_ARGUMENT", /^AdamW: 'weightDecay' must be a finite number ≥ 0, got -0\.1/);
  assertThrowsLLTM(() => new Adam([p], { weightDecay: 0.1 } as never), "INVALID_ARGUMENT", /^Adam: 'weightDecay' is AdamW's/);
  assertThrowsLLTM(() => new SGD([p, p], { lr: 0.1 }), "INVALID_ARGUMENT", /^SGD: parameter '1' is given twice/);
  assertThrowsLLTM(() => new SGD([], { lr: 0.1 }), "INVALID_ARGUMENT", /^SGD: no parameters to optimise/);
});
