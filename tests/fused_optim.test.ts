/**
 * Fused optimizers (fused: true): the parameters gathered into flat buffers,
 * one launch per buffer, against the per-parameter optimizers they replace,
 * bit for bit, with groups, schedules, weight decay, master weights and
 * restored state; clipping over the flat gradients; what stays apart.
 */
import { join } from "node:path";

import fc from "fast-check";

import {
  Adam, AdamW, clipGradNorm_, CosineAnnealingLR, type DeviceLike, type DType, GradScaler, Linear, LLTMLayer, mseLoss, nativeMemory, noGrad, type Optimizer,
  SGD, Tensor,
} from "../ts/index.ts";
import { makeBuckets } from "../ts/distributed/buckets.ts";
import * as native from "../ts/native/index.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";
import { testOnDevices } from "./op_helpers.ts";
import { tempDir } from "./temp_dir.ts";

const dir = tempDir("lltm-fused-");

const bits = (t: Tensor) => Array.from(t.toTypedArray({ raw: true }) as ArrayLike<number>);
const values = (t: Tensor) => Array.from(t.toTypedArray() as ArrayLike<number>);

/** Runs of `name` made while `fn` runs. */
function runsOf(name: native.OpName, fn: () => void): number {
  const o = native.op(name), before = native.runCount(o);
  fn();
  return native.runCount(o) - before;
}

/** Two copies of the same parameters. */
function twins(dtype: DType, sizes: readonly number[], seed: number, device: DeviceLike = "cpu"): [Tensor[], Tensor[]] {
  const make = () => sizes.map((n, i) => Tensor.randn(i % 2 === 0 ? [n] : [n, 3], { dtype, seed: seed + i, device }).requiresGrad_());
  return [make(), make()];
}

/** Gives every parameter the same fresh gradient values: into its .grad where it has one (as backward() adds), else a new one. */
function setGrads(params: readonly Tensor[], dtype: DType, seed: number): void {
  params.forEach((p, i) => {
    const g = Tensor.randn(p.shape, { dtype, seed: seed * 31 + i, device: p.device });
    if (p.grad === undefined) p.grad = g;
    else {
      noGrad(() => p.grad!.copyFrom(g));
      g.dispose();
    }
  });
}

function disposeAll(...lists: Tensor[][]): void {
  for (const l of lists) for (const t of l) t.dispose();
}

type Make = (params: Tensor[], fused: boolean) => Optimizer;

const makers: [string, Make][] = [
  ["SGD", (p, fused) => new SGD(p, { lr: 0.05, momentum: 0.9, fused })],
  ["Adam", (p, fused) => new Adam(p, { lr: 0.01, fused })],
  ["AdamW", (p, fused) => new AdamW(p, { lr: 0.01, weightDecay: 0.1, fused })],
  ["AdamW capturable", (p, fused) => new AdamW(p, { lr: 0.01, weightDecay: 0.1, capturable: true, fused })],
  [
    "AdamW groups",
    (p, fused) =>
      new AdamW([
        { params: p.filter((_, i) => i % 2 === 0), options: { lr: 0.02, weightDecay: 0 } },
        { params: p.filter((_, i) => i % 2 === 1), options: { lr: 0.005 } },
      ], { weightDecay: 0.05, fused }),
  ],
];

for (const [dtype] of [["float64"], ["float32"]] as const) {
  for (const [name, make] of makers) {
    test(`fused ${name} equals the per-parameter ${name} bit for bit under a cosine schedule (${dtype})`, () => {
      fc.assert(
        fc.property(fc.array(fc.integer({ min: 1, max: 37 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 1000 }), (sizes, seed) => {
          const [a, b] = twins(dtype, sizes, seed);
          try {
            using plain = make(a, false);
            using fused = make(b, true);
            assertEquals(fused.flatBuffers.flat().length, sizes.length, "every parameter is in a flat buffer");
            const s1 = new CosineAnnealingLR(plain, { tMax: 5 }), s2 = new CosineAnnealingLR(fused, { tMax: 5 });
            for (let step = 0; step < 4; step++) {
              setGrads(a, dtype, seed + step);
              setGrads(b, dtype, seed + step);
              plain.step();
              fused.step();
              s1.step();
              s2.step();
              a.forEach((p, i) => assertEquals(bits(b[i]!), bits(p), `${name} step ${step} parameter ${i}`));
              plain.zeroGrad();
              fused.zeroGrad();
            }
            const ps = plain.stateDict().tensors, fs = fused.stateDict().tensors;
            assertEquals(Object.keys(fs).sort(), Object.keys(ps).sort(), "the state has the same names");
            for (const k of Object.keys(ps)) {
              assertEquals(fs[k]!.shape, ps[k]!.shape, `${k}'s shape`);
              assertEquals(bits(fs[k]!), bits(ps[k]!), k);
            }
          } finally {
            disposeAll(a, b);
          }
        }),
        { numRuns: 8 },
      );
    });
  }
}

test("a fused step is one launch per flat buffer (AdamW: its decay and the update), zeroGrad one fill", () => {
  const [a, b] = twins("float32", [5, 7, 9, 11], 3);
  try {
    using plain = new AdamW(a, { lr: 0.01, fused: false });
    using fused = new AdamW(b, { lr: 0.01, fused: true });
    assertEquals(fused.flatBuffers, [["0", "1", "2", "3"]]);
    for (let step = 0; step < 3; step++) {
      setGrads(a, "float32", step);
      setGrads(b, "float32", step);
      assertEquals(runsOf("ADAM_STEP", () => plain.step()), 4);
      const adam = runsOf("ADAM_STEP", () => {
        const axpy = runsOf("AXPY", () => fused.step());
        assertEquals(axpy, 1, "one decay");
      });
      assertEquals(adam, 1, "one update");
      assertEquals(runsOf("FILL", () => fused.zeroGrad()), 1);
      plain.zeroGrad();
    }
    a.forEach((p, i) => assertEquals(bits(b[i]!), bits(p)));
  } finally {
    disposeAll(a, b);
  }
});

test("fused capturable Adam and SGD: one launch per flat buffer", () => {
  const [a, b] = twins("float32", [4, 6, 8], 5);
  try {
    using adam = new Adam(a, { lr: 0.01, capturable: true, fused: true });
    using sgd = new SGD(b, { lr: 0.1, momentum: 0.5, fused: true });
    for (let step = 0; step < 2; step++) {
      setGrads(a, "float32", step);
      setGrads(b, "float32", step);
      assertEquals(runsOf("ADAM_STEP_CAPTURABLE", () => adam.step()), 1);
      assertEquals(runsOf("SGD_STEP", () => sgd.step()), 1);
    }
  } finally {
    disposeAll(a, b);
  }
});

test("fused AdamW over bfloat16 parameters with master weights equals the per-parameter one bit for bit", () => {
  const [a, b] = twins("bfloat16", [3, 17, 8], 11);
  try {
    using plain = new AdamW(a, { lr: 0.003 });
    using fused = new AdamW(b, { lr: 0.003, fused: true });
    for (let step = 0; step < 5; step++) {
      // Half gradients, as the tape makes them: widened to float32 into the flat gradient.
      for (const p of [...a, ...b]) p.grad?.dispose();
      a.forEach((p, i) => (p.grad = Tensor.randn(p.shape, { dtype: "bfloat16", seed: step * 7 + i })));
      b.forEach((p, i) => (p.grad = Tensor.randn(p.shape, { dtype: "bfloat16", seed: step * 7 + i })));
      plain.step();
      fused.step();
      a.forEach((p, i) => {
        assertEquals(b[i]!.dtype, "bfloat16");
        assertEquals(bits(b[i]!), bits(p), `step ${step} parameter ${i}`);
        assertEquals(b[i]!.grad!.dtype, "float32", "the gradient was widened");
      });
    }
    const ps = plain.stateDict().tensors, fs = fused.stateDict().tensors;
    for (const k of Object.keys(ps)) assertEquals(bits(fs[k]!), bits(ps[k]!), k);
    assert(Object.keys(fs).includes("0.master"), "the master copy is in the state");
  } finally {
    disposeAll(a, b);
  }
});

test("fused training of a module through backward(): the same weights bit for bit, the parameters the same objects", () => {
  using m1 = new Linear(6, 4, { seed: 1 });
  using m2 = new Linear(6, 4, { seed: 1 });
  const weight = m2.parameters()[0]!;
  using x = Tensor.randn([8, 6], { seed: 2 });
  using y = Tensor.randn([8, 4], { seed: 3 });
  using o1 = new AdamW(m1.namedParameters(), { lr: 0.01 });
  using o2 = new AdamW(m2.namedParameters(), { lr: 0.01, fused: true });
  assertEquals(o2.flatBuffers, [["weight", "bias"]]);
  assert(m2.parameters()[0] === weight, "the module holds the same tensor");
  for (let step = 0; step < 4; step++) {
    for (const [m, o] of [[m1, o1], [m2, o2]] as const) {
      o.zeroGrad();
      using loss = mseLoss(m.forward(x), y);
      loss.backward();
      clipGradNorm_(m.parameters(), 0.5).dispose();
      o.step();
    }
    m1.parameters().forEach((p, i) => assertEquals(bits(m2.parameters()[i]!), bits(p), `step ${step} parameter ${i}`));
  }
  // From the second step on, backward() adds into the flat gradient in place: nothing to gather.
  const same = (what: string) => m1.parameters().forEach((p, i) => assertEquals(bits(m2.parameters()[i]!), bits(p), `${what} ${i}`));
  o1.zeroGrad();
  o2.zeroGrad();
  using loss1 = mseLoss(m1.forward(x), y);
  loss1.backward();
  o1.step();
  using loss2 = mseLoss(m2.forward(x), y);
  loss2.backward();
  assertEquals(runsOf("COPY", () => assertEquals(runsOf("ADAM_STEP", () => o2.step()), 1)), 0, "no gradient copied in");
  same("in place");
  // Set to none (Module.zeroGrad(true)): the next backward's gradients are gathered again, and the step is the same.
  m1.zeroGrad(true);
  m2.zeroGrad(true);
  assertEquals(m2.parameters()[0]!.grad, undefined);
  for (const [m, o] of [[m1, o1], [m2, o2]] as const) {
    using l = mseLoss(m.forward(x), y);
    l.backward();
    o.step();
  }
  same("after set to none");
});

test("clipGradNorm_ over a fused optimizer's gradients is one launch each way and equals the per-gradient result", () => {
  for (const dtype of ["float32", "float64"] as const) {
    const [a, b] = twins(dtype, [5, 12, 33, 2], 21);
    try {
      using plain = new SGD(a, { lr: 0.1 });
      using fused = new SGD(b, { lr: 0.1, fused: true });
      setGrads(a, dtype, 4);
      setGrads(b, dtype, 4);
      fused.zeroGrad(); // binds every .grad to the flat gradient
      setGrads(b, dtype, 4);
      using n1 = clipGradNorm_(a, 0.3);
      let n2: Tensor | undefined;
      assertEquals(runsOf("SUM_SQUARES", () => assertEquals(runsOf("SCALE_BY_NORM", () => (n2 = clipGradNorm_(b, 0.3))), 1)), 1);
      using norm = n2!;
      const tol = dtype === "float64" ? 1e-12 : 1e-6;
      const close = (got: number, want: number, what: string) => assert(Math.abs(got - want) <= tol * Math.max(1, Math.abs(want)), `${what}: ${got} vs ${want}`);
      close(norm.item(), n1.item(), "the norm");
      a.forEach((p, i) => values(b[i]!.grad!).forEach((v, k) => close(v, values(p.grad!)[k]!, `gradient ${i}[${k}]`)));
    } finally {
      disposeAll(a, b);
    }
  }
});

test("checkpoints round-trip between fused and unfused optimizers", () => {
  const [a, b] = twins("float32", [6, 10], 31);
  const [c] = twins("float32", [6, 10], 31);
  try {
    using plain = new AdamW(a, { lr: 0.01 });
    using fused = new AdamW(b, { lr: 0.01, fused: true });
    setGrads(a, "float32", 1);
    setGrads(b, "float32", 1);
    plain.step();
    fused.step();
    // Fused state into an unfused optimizer, and back, then both step alike.
    using other = new AdamW(c, { lr: 0.01 });
    other.loadStateDict(fused.stateDict());
    fused.loadStateDict(plain.stateDict());
    c.forEach((p, i) => noGrad(() => p.copyFrom(b[i]!)));
    for (const [opt, ps] of [[plain, a], [fused, b], [other, c]] as const) {
      setGrads(ps, "float32", 2);
      opt.step();
    }
    a.forEach((p, i) => {
      assertEquals(bits(b[i]!), bits(p));
      assertEquals(bits(c[i]!), bits(p));
    });
  } finally {
    disposeAll(a, b, c);
  }
});

test("what cannot move stays apart: a parameter with another live view, one that does not require gradients", () => {
  const [a] = twins("float32", [4, 5, 6], 41);
  using frozen = Tensor.randn([3]);
  const viewed = a[1]!;
  using alias = viewed.detach();
  try {
    using opt = new SGD([...a, frozen], { lr: 0.1, fused: true });
    assertEquals(opt.flatBuffers, [["0", "2"]]);
    setGrads(a, "float32", 1);
    opt.step();
    assertEquals(values(alias), values(viewed), "the alias still sees the parameter");
  } finally {
    disposeAll(a);
  }
});

test("a fused parameter moved or converted after the optimizer was made is refused by name; disposing frees the flat memory", () => {
  const before = nativeMemory().liveBytes;
  {
    using m = new Linear(5, 3, { seed: 0 });
    using opt = new Adam(m.namedParameters(), { lr: 0.01, fused: true });
    m.to("float64");
    assertThrowsLLTM(() => opt.step(), "DISPOSED", /Adam\.step: parameter 'weight' has been disposed \(moved by to\(\)\?/);
    using m2 = new Linear(5, 3, { seed: 0 });
    using opt2 = new Adam(m2.parameters(), { lr: 0.01, fused: true });
    using x = Tensor.randn([2, 5]);
    using target = Tensor.zeros([2, 3]);
    using loss = mseLoss(m2.forward(x), target);
    loss.backward();
    opt2.step();
  }
  assertEquals(nativeMemory().liveBytes, before, "every flat buffer was freed");
});

test("fused: a bad option is refused by name", () => {
  using p = Tensor.zeros([2]).requiresGrad_();
  assertThrowsLLTM(() => new Adam([p], { fused: "yes" as unknown as boolean }), "INVALID_ARGUMENT", /Adam: 'fused' must be true or false/);
  assertThrowsLLTM(() => new SGD([p], { lr: 1, fused: 1 as unknown as boolean }), "INVALID_ARGUMENT", /SGD: 'fused' must be true or false/);
});

const deviceCases: [string, DType, (p: Tensor[], fused: boolean) => Optimizer][] = [
  ["AdamW", "float32", (p, fused) => new AdamW(p, { lr: 0.01, weightDecay: 0.1, fused })],
  ["capturable AdamW", "float32", (p, fused) => new AdamW(p, { lr: 0.01, weightDecay: 0.1, capturable: true, fused })],
  ["AdamW with master weights", "bfloat16", (p, fused) => new AdamW(p, { lr: 0.01, fused })],
  ["SGD with momentum", "float64", (p, fused) => new SGD(p, { lr: 0.1, momentum: 0.9, fused })],
];

testOnDevices("fused optimizers equal the per-parameter ones bit for bit, clipped over the flat gradient in one launch", (device) => {
  for (const [name, dtype, make] of deviceCases) {
    const [a, b] = twins(dtype, [3, 40, 7], 51, device);
    try {
      using plain = make(a, false);
      using fused = make(b, true);
      const gradType: DType = dtype === "bfloat16" ? "float32" : dtype;
      for (let step = 0; step < 3; step++) {
        setGrads(a, gradType, step);
        setGrads(b, gradType, step);
        plain.step();
        const launches = runsOf("SUM_SQUARES", () => clipGradNorm_(b, 1e9).dispose());
        if (step > 0) assertEquals(launches, 1, `${name}: one norm launch`);
        fused.step();
        fused.zeroGrad();
        plain.zeroGrad();
        a.forEach((p, i) => assertEquals(bits(b[i]!), bits(p), `${name} step ${step} parameter ${i}`));
      }
    } finally {
      disposeAll(a, b);
    }
  }
});

test("GradScaler with a fused optimizer over float16 parameters: one unscale launch per flat buffer, the same training", () => {
  using m1 = new Linear(8, 4, { seed: 0 });
  using m2 = new Linear(8, 4, { seed: 0 });
  m1.to("float16");
  m2.to("float16");
  using x = Tensor.randn([16, 8], { dtype: "float16", seed: 1 });
  using y = Tensor.randn([16, 4], { dtype: "float16", seed: 2 });
  using o1 = new AdamW(m1.parameters(), { lr: 1e-3 });
  using o2 = new AdamW(m2.parameters(), { lr: 1e-3, fused: true });
  using s1 = new GradScaler({ initScale: 256 });
  using s2 = new GradScaler({ initScale: 256 });
  for (let step = 0; step < 4; step++) {
    for (const [m, o, s] of [[m1, o1, s1], [m2, o2, s2]] as const) {
      o.zeroGrad();
      using loss = mseLoss(m.forward(x), y);
      using scaled = s.scale(loss);
      scaled.backward();
      const unscales = runsOf("UNSCALE_CHECK", () => s.unscale_(o));
      if (o === o2 && step > 0) assertEquals(unscales, 1, "one unscale over the flat gradient");
      clipGradNorm_(m.parameters(), 1).dispose();
      s.step(o);
      s.update();
    }
    m1.parameters().forEach((p, i) => assertEquals(bits(m2.parameters()[i]!), bits(p), `step ${step} parameter ${i}`));
  }
});

test("parameters a disposed fused optimizer gathered are gathered again; while it lives, a second optimizer steps them one by one", () => {
  using m = new Linear(4, 3, { seed: 5 });
  using first = new SGD(m.namedParameters(), { lr: 0.1, fused: true });
  using second = new SGD(m.namedParameters(), { lr: 0.1, fused: true });
  assertEquals(first.flatBuffers, [["weight", "bias"]]);
  assertEquals(second.flatBuffers, [], "the first optimizer's buffer still views them");
  first.dispose();
  using third = new SGD(m.namedParameters(), { lr: 0.1, fused: true });
  assertEquals(third.flatBuffers, [["weight", "bias"]]);
  using x = Tensor.randn([2, 4]);
  using target = Tensor.zeros([2, 3]);
  using loss = mseLoss(m.forward(x), target);
  loss.backward();
  const before = values(m.parameters()[0]!);
  assertEquals(runsOf("SGD_STEP", () => third.step()), 1);
  assert(values(m.parameters()[0]!).some((v, k) => v !== before[k]), "the weights moved");
});

test("data parallelism's bucket of a fused optimizer's gradients reduces their flat gradient in place", () => {
  using m = new Linear(5, 2, { seed: 9 });
  using opt = new SGD(m.parameters(), { lr: 0.1, fused: true });
  const [bucket] = makeBuckets(m.parameters(), 1 << 20);
  try {
    using x = Tensor.randn([3, 5]);
    using target = Tensor.zeros([3, 2]);
    {
      using loss = mseLoss(m.forward(x), target);
      loss.backward();
    }
    assert(bucket!.gather() === bucket!.flat, "gradients backward() made where there were none are copied");
    bucket!.reset();
    opt.step();
    opt.zeroGrad();
    {
      using loss = mseLoss(m.forward(x), target);
      loss.backward();
    }
    const reduced = bucket!.gather();
    assert(reduced !== bucket!.flat && reduced.numel >= m.parameters().reduce((n, p) => n + p.numel, 0), "the flat gradient itself");
    const before = m.parameters().map((p) => bits(p.grad!));
    assertEquals(runsOf("COPY", () => bucket!.scatter()), 0, "nothing to copy back");
    m.parameters().forEach((p, i) => assertEquals(bits(p.grad!), before[i]!));
  } finally {
    bucket?.[Symbol.dispose]();
  }
});

test("the low-level layer's { name, value, grad } records: their own gradients move into the flat gradient, stepped from the first step", () => {
  using m1 = new LLTMLayer(3, 4, { seed: 2, dtype: "float64" });
  using m2 = new LLTMLayer(3, 4, { seed: 2, dtype: "float64" });
  const grad = m2.weightsGrad;
  using o1 = new Adam(m1.parameters(), { lr: 0.01 });
  using o2 = new Adam(m2.parameters(), { lr: 0.01, fused: true });
  assertEquals(o2.flatBuffers, [["weights", "bias"]]);
  assert(m2.weightsGrad === grad, "the layer holds the same gradient tensor");
  for (let step = 0; step < 3; step++) {
    for (const m of [m1, m2]) {
      using gw = Tensor.randn(m.weights.shape, { seed: step, dtype: "float64" });
      using gb = Tensor.randn(m.bias.shape, { seed: step + 100, dtype: "float64" });
      m.weightsGrad.copyFrom(gw);
      m.biasGrad.copyFrom(gb);
    }
    o1.step();
    assertEquals(runsOf("ADAM_STEP", () => o2.step()), 1);
    assertEquals(bits(m2.weights), bits(m1.weights));
    assertEquals(bits(m2.bias), bits(m1.bias));
  }
});

test("a parameter that is not contiguous stays apart, and is refused at the step as by the per-parameter optimizer", () => {
  const base = Tensor.randn([3, 4]);
  const t = base.transpose();
  base.dispose();
  using kept = Tensor.randn([5]).requiresGrad_();
  try {
    t.requiresGrad_();
    using opt = new SGD([kept, t], { lr: 0.1, fused: true });
    assertEquals(opt.flatBuffers, [["0"]]);
    t.grad = Tensor.zeros([4, 3]);
    assertThrowsLLTM(() => opt.step(), "INVALID_ARGUMENT", /SGD\.step: parameter '1' must be contiguous/);
  } finally {
    t.dispose();
  }
});

test("safetensors files of a fused model and optimizer load into unfused ones and back, names and shapes unchanged", () => {
  using m1 = new Linear(5, 3, { seed: 4 });
  using o1 = new AdamW(m1.namedParameters(), { lr: 0.01, fused: true });
  using x = Tensor.randn([4, 5]);
  using y = Tensor.randn([4, 3]);
  const train = (m: Linear, o: AdamW) => {
    o.zeroGrad();
    using loss = mseLoss(m.forward(x), y);
    loss.backward();
    o.step();
  };
  for (let i = 0; i < 2; i++) train(m1, o1);
  m1.save(join(dir, "model.safetensors"));
  o1.save(join(dir, "optimizer.safetensors"));
  using m2 = new Linear(5, 3, { seed: 99 });
  using o2 = new AdamW(m2.namedParameters(), { lr: 0.01 });
  m2.load(join(dir, "model.safetensors"));
  o2.load(join(dir, "optimizer.safetensors"));
  for (const [name, t] of Object.entries(o2.stateDict().tensors)) assertEquals(t.shape, o1.stateDict().tensors[name]!.shape, name);
  // And back: the unfused files into a fresh fused pair.
  m2.save(join(dir, "model2.safetensors"));
  o2.save(join(dir, "optimizer2.safetensors"));
  using m3 = new Linear(5, 3, { seed: 7 });
  using o3 = new AdamW(m3.namedParameters(), { lr: 0.01, fused: true });
  m3.load(join(dir, "model2.safetensors"));
  o3.load(join(dir, "optimizer2.safetensors"));
  for (const [m, o] of [[m1, o1], [m2, o2], [m3, o3]] as const) train(m, o);
  m1.parameters().forEach((p, i) => {
    assertEquals(bits(m2.parameters()[i]!), bits(p), `unfused parameter ${i}`);
    assertEquals(bits(m3.parameters()[i]!), bits(p), `fused again parameter ${i}`);
  });
});
