/** Modules: names, state dicts and files, train/eval, to(), disposal, and the errors a model builder meets. */
import { join } from "node:path";

import {
  add, clipGradNorm_, Dropout, Embedding, Linear, LLTM, LLTMCell, ModuleList, nativeMemory, noGrad, Sequential, sum, Tensor,
} from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";
import { tempDir } from "./temp_dir.ts";

const dir = tempDir("lltm-nn-");
const values = (t: Tensor) => Array.from(t.toTypedArray());

test("namedParameters carry prefixed names through children and lists", () => {
  using lltm = new LLTM(3, 4, { layers: 2, bidirectional: true });
  assertEquals(lltm.namedParameters().map(([n]) => n), [
    "layers.0.weights", "layers.0.bias", "layers.1.weights", "layers.1.bias",
    "reverseLayers.0.weights", "reverseLayers.0.bias", "reverseLayers.1.weights", "reverseLayers.1.bias",
  ]);
  assertEquals(lltm.namedParameters()[2]![1].shape, [12, 4 + 8], "layer 1 reads both directions of layer 0");
  using seq = new Sequential(new Linear(2, 3), new Linear(3, 1, { bias: false }));
  assertEquals(seq.namedParameters().map(([n]) => n), ["0.weight", "0.bias", "1.weight"]);
  assert(seq.parameters().every((p) => p.requiresGrad && p.isLeaf), "parameters are leaves that require gradients");
});

test("stateDict / loadStateDict and save / load round-trip a whole model, and refuse what does not fit", () => {
  const make = (seed: number) => new Sequential(new Linear(3, 5, { seed }), new Linear(5, 2, { seed: seed + 1 }));
  using a = make(1);
  using b = make(7);
  b.loadStateDict(a.stateDict());
  for (const [[na, ta], [nb, tb]] of a.namedParameters().map((p, i) => [p, b.namedParameters()[i]!] as const)) {
    assertEquals(nb, na);
    assertEquals(values(tb), values(ta), na);
  }
  const path = join(dir, "model.safetensors");
  using c = make(9);
  a.save(path);
  c.load(path);
  assertEquals(values(c.parameters()[2]!), values(a.parameters()[2]!));
  using wrong = new Sequential(new Linear(3, 4), new Linear(4, 2));
  assertThrowsLLTM(() => wrong.load(path), "SHAPE_MISMATCH", /loadStateDict: '0\.weight' has shape \[5, 3\], the module needs \[4, 3\]/);
  using other = new Linear(3, 5);
  assertThrowsLLTM(() => other.loadStateDict(a.stateDict()), "INVALID_ARGUMENT", /Linear\.loadStateDict: unexpected tensors '0\.weight'/);
});

test("to(dtype) converts every parameter in place, as new leaves; train/eval reach every child", () => {
  using m = new Sequential(new Linear(2, 3, { seed: 1 }), new Dropout(0.5));
  const before = values(m.parameters()[0]!);
  m.to("float64");
  assert(m.parameters().every((p) => p.dtype === "float64" && p.requiresGrad), "float64 leaves");
  assertEquals(values(m.parameters()[0]!).map((v) => Math.fround(v)), before);
  m.eval();
  assert(m.namedChildren().every(([, c]) => !c.training), "eval reaches the children");
  using x = Tensor.randn([4, 2], { dtype: "float64", seed: 2 });
  using y = m.forward(x);
  using direct = (m.at(0) as Linear).forward(x);
  assertEquals(values(y), values(direct), "dropout passes through in eval mode");
});

test("Dropout in training zeroes about p of the elements and scales the rest by 1/(1-p), gradients alike", () => {
  using d = new Dropout(0.25, { seed: 3 });
  using x = Tensor.ones([4000], { dtype: "float64" }).requiresGrad_();
  using y = d.forward(x);
  const v = values(y);
  const kept = v.filter((e) => e !== 0);
  assert(kept.every((e) => Math.abs(e - 4 / 3) < 1e-12), "kept elements scaled by 1/(1-p)");
  assert(Math.abs(kept.length / v.length - 0.75) < 0.03, `kept ${kept.length / v.length}`);
  using g = Tensor.ones([4000], { dtype: "float64" });
  y.backward(g);
  assertEquals(values(x.grad!), v, "the gradient is the same mask");
});

test("Embedding looks rows up by int32 ids and accumulates repeated ids' gradients", () => {
  using e = new Embedding(5, 3, { dtype: "float64", seed: 1 });
  using ids = Tensor.fromTypedArray(new Int32Array([1, 4, 1]), [3]);
  using y = e.forward(ids);
  const w = e.weight.toArray() as number[][];
  assertEquals(y.toArray(), [w[1]!, w[4]!, w[1]!]);
  using g = Tensor.ones([3, 3], { dtype: "float64" });
  y.backward(g);
  assertEquals(e.weight.grad!.toArray(), [[0, 0, 0], [2, 2, 2], [0, 0, 0], [0, 0, 0], [1, 1, 1]]);
  using floats = Tensor.zeros([3]);
  assertThrowsLLTM(() => e.forward(floats), "INVALID_DTYPE", /Embedding\.forward: the ids must be int32/);
});

test("errors a model builder meets name the module, the input and what was expected", () => {
  using lltm = new LLTM(5, 4, { layers: 2 });
  using wide = Tensor.zeros([6, 3, 7]);
  assertThrowsLLTM(() => lltm.forward(wide), "SHAPE_MISMATCH", /LLTM\.forward: the input has 7 features .*this LLTM's inputFeatures is 5/);
  using batchFirst = Tensor.zeros([3, 6, 5]);
  const state = lltm.initialState(3);
  assertThrowsLLTM(() => lltm.forward(batchFirst, state), "SHAPE_MISMATCH", /looks batch-first .*\{ batchFirst: true \}/);
  using square = Tensor.zeros([4, 4, 5]);
  const other = lltm.initialState(2);
  assertThrowsLLTM(() => lltm.forward(square, other), "SHAPE_MISMATCH", /state\.h has shape \[2, 2, 4\]; it must be \[2, 4, 4\]/);
  for (const t of [state.h, state.c, other.h, other.c]) t.dispose();
  using lin = new Linear(3, 2);
  using x = Tensor.zeros([2, 4]);
  assertThrowsLLTM(() => lin.forward(x), "SHAPE_MISMATCH", /Linear\.forward: the input has shape \[2, 4\]: its last dimension must be this Linear's inFeatures, 3/);
  using cell = new LLTMCell(3, 2);
  assertThrowsLLTM(() => cell.forward(x), "SHAPE_MISMATCH", /LLTMCell\.forward: .*inputFeatures is 3/);
  const gone = new Linear(2, 2);
  gone.dispose();
  using y = Tensor.zeros([1, 2]);
  assertThrowsLLTM(() => gone.forward(y), "DISPOSED", /Linear\.forward: this Linear has been disposed/);
  assertThrowsLLTM(() => new LLTM(2, 3, { dropout: 1 }), "INVALID_ARGUMENT", /LLTM: 'dropout' must be a probability in \[0, 1\), got 1/);
  assertThrowsLLTM(() => new ModuleList([1 as never]), "INVALID_ARGUMENT", /ModuleList: item 0 is not a Module/);
});

test("LLTM's batchFirst gives the transposed outputs of the time-major run; disposing frees every parameter", () => {
  const run = () => {
    using tm = new LLTM(3, 4, { seed: 5, layers: 2 });
    using bf = new LLTM(3, 4, { seed: 5, layers: 2, batchFirst: true });
    using x = Tensor.randn([6, 2, 3], { seed: 1 });
    using xt = x.transpose(0, 1);
    using xb = xt.contiguous();
    using a = noGrad(() => tm.forward(x));
    using b = noGrad(() => bf.forward(xb));
    using ot = a.output.transpose(0, 1);
    using at = ot.contiguous();
    assertEquals(values(b.output), values(at));
    assertEquals(values(b.h), values(a.h));
  };
  // The first run also makes the library's per-op call blocks, which stay.
  run();
  const before = nativeMemory().liveBytes;
  run();
  assertEquals(nativeMemory().liveBytes, before, "nothing held after disposal");
});

test("LLTM: a sequence run in two halves with the state carried gives the whole run's outputs and state", () => {
  using lltm = new LLTM(3, 4, { dtype: "float64", seed: 2, layers: 2, bidirectional: false });
  using x = Tensor.randn([6, 2, 3], { dtype: "float64", seed: 3 });
  using first = x.narrow(0, 0, 3), second = x.narrow(0, 3, 3);
  noGrad(() => {
    using whole = lltm.forward(x);
    using a = lltm.forward(first);
    using b = lltm.forward(second, { h: a.h, c: a.c });
    using tail = whole.output.narrow(0, 3, 3);
    const close = (p: Tensor, q: Tensor, what: string) =>
      values(p).forEach((v, i) => assert(Math.abs(v - values(q)[i]!) < 1e-14, `${what}[${i}]`));
    close(b.output, tail, "outputs");
    close(b.h, whole.h, "h");
    close(b.c, whole.c, "c");
  });
});

test("LLTM's final state is stacked when first read, on the tape as the forward left it; unread, it costs nothing", () => {
  const model = () => new LLTM(3, 4, { dtype: "float64", seed: 4, layers: 2, bidirectional: true });
  using x = Tensor.randn([5, 2, 3], { dtype: "float64", seed: 6 });
  // h and c read at once, then read only inside noGrad: the same tape, the same gradients.
  const gradients = (readLater: boolean) => {
    using lltm = model();
    using out = lltm.forward(x);
    const [h, c] = readLater ? noGrad(() => [out.h, out.c]) : [out.h, out.c];
    assert(h!.requiresGrad && c!.requiresGrad, "the state is on the tape");
    using sh = sum(h!), sc = sum(c!), loss = add(sh, sc);
    loss.backward();
    return lltm.parameters().map((p) => values(p.grad!));
  };
  assertEquals(gradients(true), gradients(false));
  // Never read: no stack is made, and disposing the result frees each layer's and direction's final state. Read:
  // output, h and c disposed one by one free it all too, as when the forward stacked them.
  const run = (read: boolean) => {
    using lltm = model();
    const out = noGrad(() => lltm.forward(x));
    if (!read) return out[Symbol.dispose]();
    for (const t of [out.output, out.h, out.c]) t.dispose();
  };
  for (const read of [false, true]) {
    run(read);
    const before = nativeMemory().liveBytes;
    run(read);
    assertEquals(nativeMemory().liveBytes, before, `nothing held after disposal (${read ? "read" : "unread"})`);
  }
});

test("clipGradNorm_ scales the parameters' gradients to maxNorm together and returns the norm before", () => {
  using lin = new Linear(1, 1, { dtype: "float64", seed: 1 });
  lin.weight.grad = Tensor.fromArray([[3]], { dtype: "float64" });
  lin.bias!.grad = Tensor.fromArray([4], { dtype: "float64" });
  using norm = clipGradNorm_(lin.parameters(), 1);
  assert(Math.abs(norm.item() - 5) < 1e-12, `norm ${norm.item()}`);
  const w = lin.weight.grad.item(), b = lin.bias!.grad.item();
  assert(Math.abs(Math.hypot(w, b) - 1) < 1e-5 && Math.abs(w / b - 0.75) < 1e-12, `clipped to ${w}, ${b}`);
});
