/** The optimizers' base: all-or-nothing steps, zeroGrad, a settable learning rate, state saved in safetensors. */
import { join } from "node:path";

import { Adam, LLTMLayer, LLTMError, type Optimizer, type Parameter, SGD, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";
import { tempDir } from "./temp_dir.ts";

const dir = tempDir("lltm-optim-");

/** A module with gradients set to known values. */
function model(seed = 1): LLTMLayer {
  const m = new LLTMLayer(3, 4, { seed, dtype: "float64" });
  using gw = Tensor.randn(m.weights.shape, { seed: seed + 10, dtype: "float64" });
  using gb = Tensor.randn(m.bias.shape, { seed: seed + 11, dtype: "float64" });
  m.weightsGrad.copyFrom(gw);
  m.biasGrad.copyFrom(gb);
  return m;
}

const values = (t: Tensor) => Array.from(t.toTypedArray());

const makers: [string, (p: Parameter[]) => Optimizer][] = [
  ["SGD", (p) => new SGD(p, { lr: 0.1, momentum: 0.9 })],
  ["Adam", (p) => new Adam(p, { lr: 0.01 })],
];

for (const [name, make] of makers) {
  test(`${name}: a step that fails on one parameter moves none, and the next good step is the first`, () => {
    using m = model();
    using reference = model();
    const before = { w: values(m.weights), b: values(m.bias) };
    using wrongShape = Tensor.zeros([5], { dtype: "float64" });
    using wrongDtype = Tensor.zeros(m.bias.shape, { dtype: "float32" });
    const disposed = Tensor.zeros(m.bias.shape, { dtype: "float64" });
    disposed.dispose();
    const cases: [Tensor, LLTMError["code"], RegExp][] = [
      [wrongShape, "SHAPE_MISMATCH", /step: the gradient of 'bias' has shape \[5\], parameter 'bias' \[12\]/],
      [wrongDtype, "INVALID_DTYPE", /step: the gradient of 'bias' is float32, parameter 'bias' is float64/],
      [disposed, "DISPOSED", /step: the gradient of 'bias' has been disposed/],
    ];
    for (const [badGrad, code, pattern] of cases) {
      // A parameter list whose bias gradient goes bad after the optimizer was made.
      const bias = { name: "bias", value: m.bias, grad: m.biasGrad as Tensor };
      using opt = make([{ name: "weights", value: m.weights, grad: m.weightsGrad }, bias]);
      bias.grad = badGrad;
      assertThrowsLLTM(() => opt.step(), code, pattern);
      assertEquals(values(m.weights), before.w, "the weights did not move");
      assertEquals(values(m.bias), before.b, "the bias did not move");
      bias.grad = m.biasGrad;
      opt.step();
      using fresh = make(reference.parameters());
      fresh.step();
      assertEquals(values(m.weights), values(reference.weights), "the first good step is a first step");
      m.weights.copyFrom(Tensor.fromTypedArray(new Float64Array(before.w), m.weights.shape));
      m.bias.copyFrom(Tensor.fromTypedArray(new Float64Array(before.b), m.bias.shape));
      reference.weights.copyFrom(m.weights);
      reference.bias.copyFrom(m.bias);
    }
  });

  test(`${name}: hyperparameters out of range stop the step before any parameter moves`, () => {
    using m = model();
    const before = values(m.weights);
    using opt = make(m.parameters());
    opt.lr = -1;
    assertThrowsLLTM(() => opt.step(), "INVALID_ARGUMENT", /'lr' must be in/);
    assertEquals(values(m.weights), before);
    assertThrowsLLTM(() => { opt.lr = "0.1" as unknown as number; }, "INVALID_ARGUMENT", /lr must be a number/);
  });

  test(`${name}: state saved beside the model and loaded into a new optimizer continues identically`, () => {
    using a = model();
    using optA = make(a.parameters());
    for (let i = 0; i < 3; i++) optA.step();
    optA.lr = 0.05;
    const modelPath = join(dir, `${name}-model.safetensors`), statePath = join(dir, `${name}-state.safetensors`);
    a.save(modelPath);
    optA.save(statePath);

    using b = model(); // the same gradients as a's; its weights come from the file
    b.weights.fill(0);
    b.load(modelPath);
    using optB = make(b.parameters());
    optB.load(statePath);
    assertEquals(optB.lr, 0.05);
    optA.step();
    optB.step();
    assertEquals(values(b.weights), values(a.weights));
    assertEquals(values(b.bias), values(a.bias));
    if (optA instanceof Adam) assertEquals((optB as Adam).steps, 4);
  });
}

test("zeroGrad zeroes every parameter's gradient", () => {
  using m = model();
  using opt = new SGD(m.parameters(), { lr: 0.1 });
  opt.zeroGrad();
  assert(values(m.weightsGrad).every((v) => v === 0) && values(m.biasGrad).every((v) => v === 0), "zero gradients");
});

test("a settable learning rate: the step after lr = 0 leaves the parameters, lr = x moves them by x * grad", () => {
  using m = model();
  using opt = new SGD(m.parameters(), { lr: 0.1 });
  const w0 = values(m.weights), g = values(m.weightsGrad);
  opt.lr = 0;
  opt.step();
  assertEquals(values(m.weights), w0);
  opt.lr = 0.25;
  opt.step();
  values(m.weights).forEach((v, i) => assert(Math.abs(v - (w0[i]! - 0.25 * g[i]!)) <= 1e-15, `weights[${i}]`));
});

test("loadStateDict checks everything before it changes anything", () => {
  using m = model();
  using adam = new Adam(m.parameters());
  adam.step();
  const good = adam.stateDict();
  using other = new Adam(m.parameters(), { lr: 0.5 });
  using sgd = new SGD(m.parameters(), { lr: 0.1 });
  using short = Tensor.zeros([3], { dtype: "float64" });
  const without = { ...good.tensors };
  delete without["bias.exp_avg"];
  const cases: [Parameters<Optimizer["loadStateDict"]>[0], LLTMError["code"], RegExp, Optimizer][] = [
    [good, "INVALID_ARGUMENT", /SGD\.loadStateDict: the state is of "Adam", not SGD/, sgd],
    [{ ...good, metadata: { ...good.metadata, step: "x" } }, "INVALID_ARGUMENT", /no number 'step'/, other],
    [{ ...good, metadata: { ...good.metadata, step: "1.5" } }, "INVALID_ARGUMENT", /step must be a count/, other],
    [{ ...good, tensors: without }, "INVALID_ARGUMENT", /no tensor 'bias\.exp_avg'/, other],
    [{ ...good, tensors: { ...good.tensors, "bias.exp_avg": short } }, "SHAPE_MISMATCH", /'bias\.exp_avg' has shape \[3\]/, other],
    [{ ...good, tensors: { ...good.tensors, extra: short } }, "INVALID_ARGUMENT", /a tensor 'extra' this Adam does not hold/, other],
  ];
  for (const [state, code, pattern, target] of cases) {
    const before = target.stateDict();
    const snapshot = Object.values(before.tensors).map(values);
    assertThrowsLLTM(() => target.loadStateDict(state), code, pattern);
    assertEquals(Object.values(target.stateDict().tensors).map(values), snapshot);
    assertEquals(target.stateDict().metadata, before.metadata);
  }
  using momentum = new SGD(m.parameters(), { lr: 0.1, momentum: 0.9 });
  assertThrowsLLTM(() => sgd.loadStateDict(momentum.stateDict()), "INVALID_ARGUMENT", /state has momentum 0\.9, this SGD 0/);
});

test("an optimizer made before LLTMLayer.to() says why its parameters are gone", () => {
  using m = model();
  using opt = new SGD(m.parameters(), { lr: 0.1 });
  m.weights.dispose();
  assertThrowsLLTM(() => opt.step(), "DISPOSED", /SGD\.step: parameter 'weights' has been disposed \(moved by to\(\)\?/);
});
