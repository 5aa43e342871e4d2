/**
 * Errors a model builder meets, beyond the modules' own (tests/nn.test.ts):
 * the low-level LLTMLayer blames a wrong input rather than its weights and
 * says when it is disposed; optimizers refuse options they do not have and a
 * step over a disposed module; allocation failures name the public function.
 */
import { Adam, AdamW, Linear, linear, LLTMLayer, SGD, Tensor } from "../ts/index.ts";
import { assert, assertThrowsLLTM, test } from "./harness.ts";

test("LLTMLayer: an input of the wrong width blames the input and names inputFeatures; a disposed layer says so", () => {
  using layer = new LLTMLayer(4, 3);
  const [h, c] = layer.initialState(2);
  using wide = Tensor.zeros([2, 6]);
  assertThrowsLLTM(
    () => layer.forward(wide, [h, c]), "SHAPE_MISMATCH",
    /^LLTMLayer\.forward: the input has shape \[2, 6\]; it must be \[B, 4\] \(this LLTMLayer's inputFeatures is 4\)$/,
  );
  using seq = Tensor.zeros([5, 2, 6]);
  assertThrowsLLTM(() => layer.sequence(seq, [h, c]), "SHAPE_MISMATCH", /LLTMLayer\.sequence: 'inputs' .*inputFeatures is 4/);
  const gone = new LLTMLayer(4, 3);
  gone.dispose();
  using x = Tensor.zeros([2, 4]);
  assertThrowsLLTM(() => gone.forward(x, [h, c]), "DISPOSED", /^LLTMLayer\.forward: this LLTMLayer has been disposed$/);
  h.dispose();
  c.dispose();
});

test("optimizers refuse options they do not have, in the constructor, naming those they have", () => {
  using model = new Linear(3, 2);
  assertThrowsLLTM(() => new Adam(model.parameters(), { lr: 0.1, momentum: 0.9 } as never), "INVALID_ARGUMENT", /^Adam: unknown option 'momentum'; its options are 'lr', 'betas', 'eps', 'weightDecay', 'masterWeights', 'capturable', 'fused'$/);
  assertThrowsLLTM(() => new AdamW(model.parameters(), { weight_decay: 0.1 } as never), "INVALID_ARGUMENT", /^AdamW: unknown option 'weight_decay'/);
  assertThrowsLLTM(() => new SGD(model.parameters(), { lr: 0.1, nesterov: true } as never), "INVALID_ARGUMENT", /^SGD: unknown option 'nesterov'; its options are 'lr', 'momentum', 'masterWeights', 'fused'$/);
  assertThrowsLLTM(
    () => new SGD([{ params: [model.weight] }, { params: [model.bias!], options: { lr: 0.1, mometum: 0.9 } as never }], { lr: 0.1 }),
    "INVALID_ARGUMENT", /^SGD: group 1: unknown option 'mometum'/,
  );
  assertThrowsLLTM(() => new Adam(model.parameters(), { lr: "0.1" as never }), "INVALID_ARGUMENT", /^Adam: 'lr' must be a number, got "0\.1"$/);
});

test("a step over a disposed module's parameters is refused, not passed over", () => {
  const model = new Linear(3, 2);
  using optimizer = new Adam(model.namedParameters());
  model.dispose();
  assertThrowsLLTM(() => optimizer.step(), "DISPOSED", /^Adam\.step: parameter 'weight' has been disposed/);
  assertThrowsLLTM(() => optimizer.zeroGrad(), "DISPOSED", /^Adam\.zeroGrad: parameter 'weight' has been disposed/);
});

test("an allocation that cannot be made names the public function, never an internal one", () => {
  for (const [name, make] of [
    ["Tensor.zeros", () => Tensor.zeros([2 ** 40, 2 ** 10])],
    ["Tensor.empty", () => Tensor.empty([2 ** 40, 2 ** 10])],
    ["Tensor.full", () => Tensor.full([2 ** 40, 2 ** 10], 1)],
  ] as const) {
    const e = assertThrowsLLTM(make, "OUT_OF_MEMORY", new RegExp(`^${name.replace(".", "\\.")}: out of host memory allocating`));
    assert(!/\balloc:/.test(e.message), e.message);
  }
  // An op's outputs (from a view of one row repeated, so that only the output is large): the op's C entry point.
  using row = Tensor.zeros([1, 1]);
  using tall = row.expand([2 ** 40, 1]);
  using w = Tensor.zeros([1024, 1]);
  const e = assertThrowsLLTM(() => linear(tall, w), "OUT_OF_MEMORY", /^lltm_linear: out of host memory allocating/);
  assert(!/\balloc:/.test(e.message), e.message);
});
