/**
 * Mixed-precision training: the UNSCALE_CHECK op (against the values in
 * float64, the flag for every kind of non-finite element), GradScaler's
 * skip-and-adjust rules as torch.amp.GradScaler has them, the optimizers'
 * float32 master weights for half parameters, and bad input by name.
 */
import fc from "fast-check";

import { Adam, AdamW, type DeviceLike, GradScaler, Linear, LLTMError, mseLoss, noGrad, SGD, Tensor, unscaleCheck_ } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM } from "./harness.ts";
import { maxRelative, testOnDevices, values } from "./op_helpers.ts";

testOnDevices("unscaleCheck_ scales in place by invScale and sets the flag only where an element is not finite", (device) => {
  fc.assert(
    fc.property(
      // Away from float32's subnormals, where scaling by a power of two would round.
      fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }).filter((x) => x === 0 || Math.abs(x) > 1e-20), { minLength: 1, maxLength: 50 }),
      fc.constantFrom("float32", "float64", "bfloat16", "float16") as fc.Arbitrary<"float32" | "float64" | "bfloat16" | "float16">,
      fc.constantFrom(0, 1, 2, 3),
      fc.integer({ min: -20, max: 20 }),
      (xs, dtype, poison, e) => {
        using t = Tensor.fromArray(xs, { dtype, device });
        const before = values(t);
        if (poison > 0) {
          const bad = [Infinity, -Infinity, NaN][poison - 1]!;
          const host = [...before];
          host[host.length >> 1] = bad;
          t.copyFrom(Tensor.fromArray(host, { dtype, device }));
        }
        const flagType = dtype === "float64" ? "float64" : "float32";
        using flag = Tensor.zeros([1], { dtype: flagType, device });
        const invScale = 2 ** e;
        const original = values(t);
        unscaleCheck_(t, flag, invScale);
        // Set by the poisoned element, or by a value float16 rounds to infinity (from 65520 on).
        assertEquals([...values(flag)], [original.some((v) => !Number.isFinite(v)) ? 1 : 0]);
        if (poison > 0) assertEquals([...values(flag)], [1]);
        const got = values(t), want = original.map((v) => v * invScale);
        got.forEach((g, i) => {
          if (!Number.isFinite(want[i]!)) assert(Object.is(g, want[i]) || (Number.isNaN(g) && Number.isNaN(want[i]!)), `element ${i}`);
        });
        // Scaling by a power of two is exact unless a half type's range is left.
        if (poison === 0 && dtype !== "float16") assert(maxRelative(got, want) === 0, `scaled values ${dtype}`);
      },
    ),
    { numRuns: 40 },
  );
});

testOnDevices("unscaleCheck_ leaves a set flag set and refuses bad input by name", (device) => {
  using t = Tensor.fromArray([1, 2], { device }), flag = Tensor.fromArray([1], { device });
  unscaleCheck_(t, flag, 0.5);
  assertEquals([...values(flag)], [1]);
  assertEquals([...values(t)], [0.5, 1]);
  using wide = Tensor.zeros([2], { device });
  assertThrowsLLTM(() => unscaleCheck_(t, wide, 1), "SHAPE_MISMATCH", /^unscaleCheck_: 'foundInf'/);
  using d = Tensor.zeros([1], { dtype: "float64", device });
  assertThrowsLLTM(() => unscaleCheck_(t, d, 1), "INVALID_DTYPE", /^unscaleCheck_/);
  assertThrowsLLTM(() => unscaleCheck_(t, flag, NaN), "INVALID_ARGUMENT", /^unscaleCheck_: 'invScale' must be a finite number/);
  assertEquals([...values(t)], [0.5, 1]);
});

/** A half linear model, a loss and the scaled backward: the pieces of one training step. */
function halfModel(device: DeviceLike, dtype: "bfloat16" | "float16") {
  const model = new Linear(4, 3, { seed: 1, device });
  model.to(dtype);
  const x = Tensor.randn([8, 4], { seed: 2, dtype, device });
  const y = Tensor.randn([8, 3], { seed: 3, dtype, device });
  return { model, x, y, [Symbol.dispose]: () => [model, x, y].forEach((t) => t.dispose()) };
}

testOnDevices("GradScaler steps with the true gradients: the same update as the unscaled loss", (device) => {
  for (const dtype of ["bfloat16", "float16"] as const) {
    using a = halfModel(device, dtype), b = halfModel(device, dtype);
    using optA = new SGD(a.model.parameters(), { lr: 0.1 }), optB = new SGD(b.model.parameters(), { lr: 0.1 });
    using scaler = new GradScaler({ initScale: 1024 });
    {
      using loss = mseLoss(a.model.forward(a.x), a.y);
      using scaled = scaler.scale(loss);
      assertEquals(scaled.dtype, "float32");
      scaled.backward();
    }
    assert(scaler.step(optA), "stepped");
    scaler.update();
    {
      using loss = mseLoss(b.model.forward(b.x), b.y);
      loss.backward();
    }
    optB.step();
    const pa = a.model.parameters(), pb = b.model.parameters();
    pa.forEach((p, i) => {
      assertEquals(p.dtype, dtype);
      assertEquals(p.grad!.dtype, "float32");
      assert(maxRelative(values(p.grad!), values(pb[i]!.grad!)) <= 1e-6, `${dtype} gradient ${i}`);
      assertEquals([...values(p)], [...values(pb[i]!)]);
    });
    assertEquals(scaler.getScale(), 1024);
  }
});

testOnDevices("GradScaler skips a step with an infinity, halves the scale, and grows it after growthInterval clean steps", (device) => {
  using m = halfModel(device, "float16");
  using opt = new Adam(m.model.parameters(), { lr: 0.01 });
  using scaler = new GradScaler({ initScale: 2 ** 30, growthInterval: 2 });
  const before = m.model.parameters().map(values);
  const step = () => {
    opt.zeroGrad();
    using loss = mseLoss(m.model.forward(m.x), m.y);
    using scaled = scaler.scale(loss);
    scaled.backward();
    const stepped = scaler.step(opt);
    scaler.update();
    return stepped;
  };
  // 2^30 times a float16 gradient overflows: the step is skipped and nothing moves.
  assertEquals(step(), false);
  assertEquals(scaler.getScale(), 2 ** 29);
  m.model.parameters().forEach((p, i) => assertEquals([...values(p)], [...before[i]!]));
  let scale = scaler.getScale(), skipped = 0;
  while (scale > 1 && !step()) {
    skipped++;
    assertEquals(scaler.getScale(), scale / 2);
    scale /= 2;
  }
  assert(skipped < 30, "a scale was found that does not overflow");
  const clean = scaler.getScale();
  assert(step(), "a second clean step");
  assertEquals(scaler.getScale(), clean * 2);
  assertEquals(scaler.stateDict()._growth_tracker, 0);
  assert(m.model.parameters().some((p, i) => values(p).some((v, k) => v !== before[i]![k])), "the parameters moved");
});

testOnDevices("master weights: float32 copies take updates below a half type's spacing, and travel in stateDict", (device) => {
  using w = Tensor.fromArray([1, 1], { dtype: "bfloat16", device }).requiresGrad_();
  using plain = Tensor.fromArray([1, 1], { dtype: "bfloat16", device }).requiresGrad_();
  using opt = new SGD([["w", w]], { lr: 1e-3 });
  using noMaster = new SGD([["w", plain]], { lr: 1e-3, masterWeights: false });
  for (let k = 0; k < 10; k++) {
    w.grad?.dispose();
    w.grad = Tensor.fromArray([1, -1], { dtype: "bfloat16", device });
    plain.grad?.dispose();
    plain.grad = Tensor.fromArray([1, -1], { dtype: "bfloat16", device });
    opt.step();
    noMaster.step();
  }
  // 1 - 1e-3 and 1 + 1e-3 round back to 1 in bfloat16 (spacing 2^-8 below 1, 2^-7 above); ten steps through float32 do not.
  assertEquals([...values(plain)], [1, 1]);
  const state = opt.stateDict();
  assertEquals(state.tensors["w.master"]!.dtype, "float32");
  assert(maxRelative(values(state.tensors["w.master"]!), [0.99, 1.01]) <= 1e-6, "master holds the float32 sum");
  assert(maxRelative(values(w), [0.99, 1.01]) <= 2 ** -8, "the parameter is its rounded copy");
  // The step widened the tape's bfloat16 gradient: master weights keep their gradients in float32.
  assertEquals(w.grad!.dtype, "float32");
  assertEquals(plain.grad!.dtype, "bfloat16");
  using other = Tensor.fromArray([5, 5], { dtype: "bfloat16", device }).requiresGrad_();
  using opt2 = new SGD([["w", other]], { lr: 1e-3 });
  opt2.loadStateDict(state);
  assert(maxRelative(values(other), values(w)) === 0, "loading the state writes the parameter from its master");
});

testOnDevices("AdamW with master weights matches float32 training of the same rounded start", (device) => {
  using m = halfModel(device, "bfloat16");
  using ref = new Linear(4, 3, { seed: 1, device });
  noGrad(() => ref.parameters().forEach((p, i) => p.copyFrom(m.model.parameters()[i]!)));
  using x32 = m.x.to("float32"), y32 = m.y.to("float32");
  using opt = new AdamW(m.model.parameters(), { lr: 1e-2 }), optRef = new AdamW(ref.parameters(), { lr: 1e-2 });
  for (let k = 0; k < 5; k++) {
    opt.zeroGrad();
    optRef.zeroGrad();
    {
      using l = mseLoss(m.model.forward(m.x), m.y);
      l.backward();
    }
    {
      using l = mseLoss(ref.forward(x32), y32);
      l.backward();
    }
    opt.step();
    optRef.step();
  }
  const masters = opt.stateDict().tensors;
  ref.parameters().forEach((p, i) => {
    const name = String(i);
    // bfloat16 activations and gradients (8 bits) against float32 ones: a few ulps of bfloat16 after 5 steps.
    assert(maxRelative(values(masters[`${name}.master`]!), values(p)) <= 3e-2, `parameter ${i}`);
  });
});

testOnDevices("GradScaler refuses misuse by name", (device) => {
  assertThrowsLLTM(() => new GradScaler({ initScale: 0 }), "INVALID_ARGUMENT", /^GradScaler: 'initScale' must be a finite number > 0/);
  assertThrowsLLTM(() => new GradScaler({ backoffFactor: 1 }), "INVALID_ARGUMENT", /^GradScaler: 'backoffFactor' must be in \(0, 1\)/);
  assertThrowsLLTM(() => new GradScaler({ growthInterval: 0.5 }), "INVALID_ARGUMENT", /^GradScaler: 'growthInterval' must be an integer/);
  using scaler = new GradScaler();
  assertThrowsLLTM(() => scaler.update(), "INVALID_ARGUMENT", /^GradScaler.update: no optimizer was stepped/);
  using w = Tensor.fromArray([1, 1], { dtype: "float16", device }).requiresGrad_();
  using opt = new SGD([["w", w]], { lr: 1, masterWeights: false });
  w.grad = Tensor.fromArray([1, 1], { dtype: "float16", device });
  assertThrowsLLTM(() => scaler.unscale_(opt), "INVALID_DTYPE", /^GradScaler.unscale_: the gradient of 'w' is float16/);
  using w2 = Tensor.fromArray([1, 1], { device }).requiresGrad_();
  using opt2 = new SGD([w2], { lr: 1 });
  w2.grad = Tensor.fromArray([1, 1], { device });
  scaler.unscale_(opt2);
  assertThrowsLLTM(() => scaler.unscale_(opt2), "INVALID_ARGUMENT", /^GradScaler.unscale_: unscale_\(\) has already been called/);
  scaler.step(opt2);
  assertThrowsLLTM(() => scaler.step(opt2), "INVALID_ARGUMENT", /^GradScaler.step: step\(\) has already been called/);
  scaler.update();
  assertEquals([...values(w2)], [1 - 2 ** -16, 1 - 2 ** -16]);
  assertThrowsLLTM(() => new SGD([w], { lr: 1, masterWeights: 1 as unknown as boolean }), "INVALID_ARGUMENT", /^SGD: 'masterWeights' must be true or false/);
  assert(!(scaler.stateDict() instanceof LLTMError), "state");
});

testOnDevices("GradScaler's state round-trips, and a disabled scaler passes through", (device) => {
  using a = new GradScaler({ initScale: 8, growthInterval: 3 });
  using b = new GradScaler({ growthInterval: 3 });
  b.loadStateDict(a.stateDict());
  assertEquals(b.getScale(), 8);
  using c = new GradScaler({ growthInterval: 4 });
  assertThrowsLLTM(() => c.loadStateDict(a.stateDict()), "INVALID_ARGUMENT", /^GradScaler.loadStateDict: the state's growth_interval is 3/);
  using off = new GradScaler({ enabled: false });
  using x = Tensor.fromArray([2], { device });
  using y = off.scale(x);
  assertEquals([...values(y)], [2]);
  assertEquals(off.getScale(), 1);
});
