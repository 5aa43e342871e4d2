/**
 * compileStep: on the CPU every call runs the step; on CUDA the step is
 * captured once and replayed, with the same results as running it eagerly
 * (a model of embedding, stacked LLTMs, a linear head, cross-entropy,
 * clipping and capturable AdamW under a schedule), and what cannot be
 * captured is refused by name. The CUDA tests skip without a GPU.
 */
import { AdamW, compileStep, cuda, Dropout, mseLoss, noGrad, SGD, Tensor } from "../ts/index.ts";
import { checkCapturedTraining } from "./captured_training.ts";
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

for (const fused of [false, true]) {
  test(`a captured training step replays with the results of the eager step, schedule and step count included${fused ? " (fused optimizer)" : ""}`, () => {
    checkCapturedTraining(fused);
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
