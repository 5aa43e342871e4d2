/**
 * compileStep: on the CPU every call runs the step; on CUDA the step is
 * captured once and replayed, with the same results as running it eagerly
 * (a model of embedding, stacked LLTMs, a linear head, cross-entropy,
 * clipping and capturable AdamW under a schedule), and what cannot be
 * captured is refused by name. The CUDA tests skip without a GPU.
 */
import {
  AdamW, clipGradNorm_, compileStep, CosineAnnealingLR, crossEntropy, cuda, Dropout, Embedding, Linear, LLTM, mseLoss, noGrad, SGD,
  Tensor,
} from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";

const skip = cudaSkipReason();
const values = (t: Tensor) => Array.from(t.toTypedArray() as ArrayLike<number>);

test("on the CPU a compiled step runs its function at every call, with the inputs as given", () => {
  let calls = 0;
  using w = Tensor.ones([3]).requiresGrad_();
  using sgd = new SGD([w], { lr: 0.5 });
  using step = compileStep((x: Tensor, y: Tensor) => {
    calls++;
    sgd.zeroGrad();
    using l = mseLoss(w, x);
    l.backward();
    sgd.step();
    return noGrad(() => l.clone().add_(y));
  });
  for (let i = 0; i < 4; i++) {
    using x = Tensor.zeros([3]), y = Tensor.full([1], i);
    using out = step(x, y);
    assertEquals(out.device.toString(), "cpu");
  }
  assertEquals(calls, 4);
  assertEquals(step.captured, false);
  // d/dw mean((w - 0)^2) = 2w/3 each step: w ← w (1 - 1/3).
  values(w).forEach((v) => assert(Math.abs(v - (2 / 3) ** 4) < 1e-6, `w ${v}`));
});

test("compileStep checks its arguments", () => {
  assertThrowsLLTM(() => compileStep(3 as unknown as () => void), "INVALID_ARGUMENT", /compileStep: 'fn' must be a function/);
  assertThrowsLLTM(() => compileStep(() => {}, { warmup: 0 }), "INVALID_ARGUMENT", /compileStep: 'warmup' must be an integer ≥ 1/);
  const step = compileStep((_x: Tensor) => {});
  assertThrowsLLTM(() => step(1 as unknown as Tensor), "INVALID_ARGUMENT", /compileStep: input 0 is not a Tensor/);
  step.dispose();
  using x = Tensor.zeros([1]);
  assertThrowsLLTM(() => step(x), "DISPOSED", /compileStep: the compiled step has been disposed/);
});

/** A small language model and its training step, in float64 so that captured and eager agree to rounding. */
function languageModel(seed: number, fused = false) {
  const o = { device: "cuda", dtype: "float64", seed } as const;
  const embed = new Embedding(11, 6, o), lltm = new LLTM(6, 8, { ...o, layers: 2 }), head = new Linear(8, 11, o);
  const params = [...embed.namedParameters("embed."), ...lltm.namedParameters("lltm."), ...head.namedParameters("head.")];
  const optimizer = new AdamW(params, { lr: 0.02, weightDecay: 0.1, capturable: true, fused });
  const schedule = new CosineAnnealingLR(optimizer, { tMax: 6, etaMin: 0.001 });
  const losses = Tensor.zeros([1], { device: "cuda", dtype: "float64" });
  const step = (ids: Tensor, targets: Tensor) => {
    {
      using x = embed.forward(ids);
      using out = lltm.forward(x);
      using logits = head.forward(out.output);
      using flat = logits.reshape([5 * 3, 11]);
      using flatTargets = targets.reshape([15]);
      using loss = crossEntropy(flat, flatTargets);
      loss.backward();
      noGrad(() => losses.add_(loss));
    }
    clipGradNorm_(params.map(([, t]) => t), 0.5).dispose();
    optimizer.step();
    optimizer.zeroGrad();
  };
  const dispose = () => {
    for (const m of [embed, lltm, head, optimizer, losses]) m.dispose();
  };
  return { params, optimizer, schedule, losses, step, dispose };
}

function batch(i: number): [Tensor, Tensor] {
  const ids = Int32Array.from({ length: 15 }, (_, k) => (k * 7 + i * 3) % 11);
  const targets = Int32Array.from({ length: 15 }, (_, k) => (k * 5 + i) % 11);
  return [Tensor.fromTypedArray(ids, [5, 3]), Tensor.fromTypedArray(targets, [5, 3])];
}

for (const fused of [false, true]) {
  test(`a captured training step replays with the results of the eager step, schedule and step count included${fused ? " (fused optimizer)" : ""}`, () => {
    const eager = languageModel(1), captured = languageModel(1, fused);
    try {
      assertEquals(captured.optimizer.flatBuffers.length, fused ? 1 : 0);
      using step = compileStep(captured.step, { device: "cuda", warmup: 2 });
      for (let i = 0; i < 7; i++) {
        const [ids, targets] = batch(i);
        using devIds = ids.to("cuda"), devTargets = targets.to("cuda");
        eager.step(devIds, devTargets);
        step(ids, targets);
        eager.schedule.step();
        captured.schedule.step();
        ids.dispose();
        targets.dispose();
        const want = eager.losses.item(), got = captured.losses.item();
        assert(Math.abs(got - want) <= 1e-10 * Math.abs(want), `step ${i}: loss sum ${got} vs ${want}`);
      }
      assertEquals(step.captured, true);
      eager.params.forEach(([name, p], k) => {
        const q = captured.params[k]![1];
        const a = values(p), b = values(q);
        a.forEach((v, j) => assert(Math.abs(b[j]! - v) <= 1e-10 * Math.max(1, Math.abs(v)), `${name}[${j}]: ${b[j]} vs ${v}`));
      });
    } finally {
      eager.dispose();
      captured.dispose();
    }
  }, { skip });
}

test("what cannot be captured is refused by name, and the device works on afterwards", () => {
  using w = Tensor.ones([4], { device: "cuda" }).requiresGrad_();
  using x = Tensor.zeros([4], { device: "cuda" });
  const read = compileStep((t: Tensor) => {
    using l = mseLoss(w, t);
    l.item();
  }, { warmup: 1 });
  read(x);
  assertThrowsLLTM(() => read(x), "INVALID_ARGUMENT", /cuda:0 is being captured, and a captured step cannot wait for the device/);
  read.dispose();
  using drop = new Dropout(0.5);
  const dropStep = compileStep((t: Tensor) => drop.forward(t), { warmup: 1 });
  dropStep(x).dispose();
  assertThrowsLLTM(() => dropStep(x), "INVALID_ARGUMENT", /Dropout.forward: cannot run inside a captured step/);
  dropStep.dispose();
  using plain = new AdamW([w], { lr: 0.1 });
  const adamStep = compileStep((t: Tensor) => {
    plain.zeroGrad();
    using l = mseLoss(w, t);
    l.backward();
    plain.step();
  }, { warmup: 1 });
  adamStep(x);
  assertThrowsLLTM(() => adamStep(x), "INVALID_ARGUMENT", /AdamW.step: .* make the AdamW with \{ capturable: true \}/);
  adamStep.dispose();
  using sgd = new SGD([w], { lr: 0.1 });
  using sgdStep = compileStep((t: Tensor) => {
    sgd.zeroGrad();
    using l = mseLoss(w, t);
    l.backward();
    sgd.step();
  }, { warmup: 1 });
  sgdStep(x);
  sgdStep(x);
  sgd.lr = 0.05;
  assertThrowsLLTM(() => sgdStep(x), "INVALID_ARGUMENT", /SGD.step: 'lr' changed from 0.1 to 0.05 after the step was captured/);
  using y = Tensor.ones([2], { device: "cuda" });
  assertEquals(y.toArray(), [1, 1]);
  cuda.synchronize();
}, { skip });
