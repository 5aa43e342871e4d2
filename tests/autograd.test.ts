/**
 * The tape: gradients of composed modules against float64 central
 * differences, accumulation into .grad, noGrad, detach, and the memory a
 * step leaves behind (none but the leaves' gradients).
 */
import {
  add, crossEntropy, Embedding, LLTM, LLTMCell, LLTMLayer, Linear, type Module, mseLoss, mul, nativeMemory, noGrad, scale, Sequential, softmax, stack, sub, sum, Tensor,
} from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";

const f64 = { dtype: "float64" } as const;

/** Σ weights ⊙ y read on the host: the scalar whose gradient y.backward(weights) gives. */
function dot(y: Tensor, weights: Float64Array): number {
  const v = y.toTypedArray();
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * weights[i]!;
  return s;
}

/** Checks every parameter's .grad (and the input's) of loss = Σ R ⊙ forward(x) against central differences. */
function checkGradients(modules: Module[], x: Tensor, forward: (x: Tensor) => Tensor, seed: number, inputGrad = true): void {
  const probe = noGrad(() => forward(x));
  const shape = probe.shape;
  probe.dispose();
  using r = Tensor.randn(shape, { ...f64, seed });
  const weights = r.toTypedArray() as Float64Array;
  if (inputGrad) x.requiresGrad_();
  {
    using y = forward(x);
    y.backward(r);
  }
  const loss = () => noGrad(() => {
    using y = forward(x);
    return dot(y, weights);
  });
  const eps = 1e-6;
  const tensors: [string, Tensor][] = inputGrad ? [["input", x]] : [];
  for (const m of modules) tensors.push(...m.namedParameters());
  for (const [name, p] of tensors) {
    const analytic = p.grad!.toTypedArray();
    const values = p.toTypedArray() as Float64Array;
    // A few coordinates of each, spread over the tensor, keep the test fast.
    const step = Math.max(1, Math.floor(values.length / 7));
    for (let i = 0; i < values.length; i += step) {
      const at = (v: number) => {
        values[i] = v;
        noGrad(() => {
          using t = Tensor.fromTypedArray(values, p.shape, f64);
          p.copyFrom(t);
        });
      };
      const v0 = values[i]!;
      at(v0 + eps);
      const plus = loss();
      at(v0 - eps);
      const minus = loss();
      at(v0);
      const numeric = (plus - minus) / (2 * eps);
      const err = Math.abs(numeric - analytic[i]!) / Math.max(1, Math.abs(numeric));
      assert(err < 1e-6, `${name}[${i}]: tape ${analytic[i]} vs central differences ${numeric}`);
    }
  }
}

test("linear → 2-layer bidirectional LLTM → linear: every gradient matches central differences (float64)", () => {
  using inProj = new Linear(3, 4, { ...f64, seed: 1 });
  using lltm = new LLTM(4, 5, { ...f64, seed: 2, layers: 2, bidirectional: true });
  using head = new Linear(10, 2, { ...f64, seed: 3 });
  using x = Tensor.randn([6, 3, 3], { ...f64, seed: 4 });
  checkGradients([inProj, lltm, head], x, (input) => {
    using a = inProj.forward(input);
    const out = lltm.forward(a);
    out.h.dispose();
    out.c.dispose();
    using o = out.output;
    return head.forward(o);
  }, 5);
});

test("embedding → 2-layer LLTM with dropout off → linear → crossEntropy: gradients match central differences (float64)", () => {
  using embed = new Embedding(7, 3, { ...f64, seed: 1 });
  using lltm = new LLTM(3, 4, { ...f64, seed: 2, layers: 2 });
  using head = new Linear(4, 7, { ...f64, seed: 3 });
  using ids = Tensor.fromTypedArray(new Int32Array([0, 3, 6, 2, 2, 5, 1, 4, 6, 0]), [5, 2]);
  using targets = Tensor.fromTypedArray(new Int32Array([3, 6, 2, 2, 5, 1, 4, 6, 0, 1]));
  for (const reduction of ["mean", "sum"] as const) {
    for (const m of [embed, lltm, head]) m.zeroGrad(true);
    checkGradients([embed, lltm, head], ids, (input) => {
      using x = embed.forward(input);
      using out = lltm.forward(x);
      using logits = head.forward(out.output);
      using flat = logits.reshape([10, 7]);
      return crossEntropy(flat, targets, { reduction });
    }, 12, false);
  }
});

test("add, sub, mul, scale, softmax and mseLoss: gradients match central differences (float64)", () => {
  using y = Tensor.randn([3, 4], { ...f64, seed: 20 });
  using target = Tensor.randn([3, 4], { ...f64, seed: 21 });
  using x = Tensor.randn([3, 4], { ...f64, seed: 22 });
  checkGradients([], x, (input) => {
    using a = add(input, y, { alpha: 0.5 });
    using b = mul(a, input);
    using c = scale(b, -1.5);
    using d = sub(c, input);
    using p = softmax(d);
    return mseLoss(p, target);
  }, 23);
});

test("batch-first LLTM from a given state, through its final h and c, matches central differences (float64)", () => {
  using lltm = new LLTM(3, 4, { ...f64, seed: 7, layers: 2, batchFirst: true });
  using h0 = Tensor.randn([2, 2, 4], { ...f64, seed: 8 }).requiresGrad_();
  using c0 = Tensor.randn([2, 2, 4], { ...f64, seed: 9 }).requiresGrad_();
  using x = Tensor.randn([2, 5, 3], { ...f64, seed: 10 });
  checkGradients([lltm], x, (input) => {
    const out = lltm.forward(input, { h: h0, c: c0 });
    out.output.dispose();
    using h = out.h;
    using c = out.c;
    // The final h and c through one output: stack's node joins them on the tape.
    return stack([h, c]);
  }, 11);
  assert(h0.grad !== undefined && c0.grad !== undefined, "the initial state received gradients");
});

test("LLTMCell steps match LLTMLayer's explicit step API, values and gradients", () => {
  using cell = new LLTMCell(3, 4, { ...f64, seed: 3 });
  using layer = new LLTMLayer(3, 4, { ...f64, seed: 3 });
  assertEquals(Array.from(cell.weights.toTypedArray()), Array.from(layer.weights.toTypedArray()));
  using x = Tensor.randn([2, 3], { ...f64, seed: 4 });
  const [h, c] = layer.initialState(2);
  using step = layer.forward(x, [h, c]);
  using g = Tensor.ones([2, 4], f64), z = Tensor.zeros([2, 4], f64);
  using grads = step.backward(g, z);
  const out = cell.forward(x);
  out.c.dispose();
  using newH = out.h;
  assertEquals(Array.from(newH.toTypedArray()), Array.from(step.newH.toTypedArray()));
  newH.backward(g);
  assertEquals(Array.from(cell.weights.grad!.toTypedArray()), Array.from(layer.weightsGrad.toTypedArray()));
  h.dispose();
  c.dispose();
  void grads;
});

test("gradients accumulate into .grad across backward() calls until zeroGrad", () => {
  using lin = new Linear(3, 2, { ...f64, seed: 1 });
  using x = Tensor.randn([4, 3], { ...f64, seed: 2 });
  using g = Tensor.ones([4, 2], f64);
  const once = () => {
    using y = lin.forward(x);
    y.backward(g);
  };
  once();
  const first = Array.from(lin.weight.grad!.toTypedArray());
  once();
  assertEquals(Array.from(lin.weight.grad!.toTypedArray()), first.map((v) => 2 * v));
  lin.zeroGrad();
  assert(Array.from(lin.weight.grad!.toTypedArray()).every((v) => v === 0), "zeroGrad clears");
});

test("noGrad records nothing; detach keeps a value past backward; a freed intermediate says why", () => {
  using model = new Sequential(new Linear(3, 4, { seed: 1 }), new Linear(4, 1, { seed: 2 }));
  using x = Tensor.randn([2, 3], { seed: 3 });
  const y = noGrad(() => model.forward(x));
  assert(!y.requiresGrad && y.gradFn === undefined, "nothing recorded under noGrad");
  y.dispose();
  const first = model.at(0) as Linear;
  const hidden = first.forward(x);
  using kept = hidden.detach();
  using out = (model.at(1) as Linear).forward(hidden);
  using flat = out.reshape([2]);
  using loss = flat.narrow(0, 0, 1);
  const value = out.toTypedArray()[0];
  loss.backward();
  assertEquals(loss.item(), value, "the root stays alive");
  assertThrowsLLTM(() => hidden.toTypedArray(), "DISPOSED", /backward\(\) consumed the graph that made it; keep it with detach\(\)/);
  assertEquals(kept.shape, [2, 4]);
  assertThrowsLLTM(() => loss.backward(), "INVALID_ARGUMENT", /already been consumed/);
});

test("a training step leaves no native memory behind but the gradients, with or without backward", () => {
  using model = new LLTM(3, 8, { layers: 2, seed: 1 });
  using head = new Linear(8, 2, { seed: 2 });
  using x = Tensor.randn([5, 4, 3], { seed: 3 });
  using g = Tensor.ones([5, 4, 2]);
  const step = (differentiate: boolean) => {
    const out = model.forward(x);
    using y = head.forward(out.output);
    out.output.dispose();
    out.h.dispose();
    out.c.dispose();
    if (differentiate) y.backward(g);
  };
  step(true);
  const after = nativeMemory().liveBytes;
  for (let i = 0; i < 3; i++) step(true);
  assertEquals(nativeMemory().liveBytes, after, "bytes after more steps");
  step(false);
  assertEquals(nativeMemory().liveBytes, after, "a graph never differentiated is freed with its tensors");
});

test("a char-model step (embedding, dropout, LLTM, linear, crossEntropy, sum) leaves no native memory behind", () => {
  using embed = new Embedding(6, 3, { seed: 1 });
  using model = new LLTM(3, 5, { layers: 2, dropout: 0.3, bidirectional: true, seed: 2 });
  using head = new Linear(10, 6, { seed: 3 });
  using ids = Tensor.fromTypedArray(new Int32Array([0, 1, 2, 3, 4, 5, 0, 1]), [4, 2]);
  using targets = Tensor.fromTypedArray(new Int32Array([1, 2, 3, 4, 5, 0, 1, 2]), [4, 2]);
  const step = () => {
    using x = embed.forward(ids);
    using out = model.forward(x);
    using logits = head.forward(out.output);
    using perRow = crossEntropy(logits, targets, { reduction: "none" });
    using loss = sum(perRow);
    loss.backward();
  };
  step();
  const after = nativeMemory().liveBytes;
  for (let i = 0; i < 3; i++) step();
  assertEquals(nativeMemory().liveBytes, after, "bytes after more steps");
});
