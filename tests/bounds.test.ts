/**
 * The TypeScript side's holes an attack found: sizes beyond what 64-bit byte
 * counts hold, device indices beyond an int32, outputs sharing memory with
 * inputs; and that every such error is an LLTMError with a code.
 */
import {
  LLTMError, LLTMLayer, LLTMFunction, lltmBackwardAccumulate, lltmForward, Tensor,
} from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";

test("sizes whose byte count is beyond 2^53 are refused by name, before anything is allocated", () => {
  assertThrowsLLTM(() => Tensor.zeros([2 ** 45 + 1, 2 ** 18]), "INVALID_ARGUMENT", /shape \[35184372088833, 262144\] holds .* bytes, more than the 9007199254740991 bytes/);
  assertThrowsLLTM(() => Tensor.empty([2 ** 31, 2 ** 31]), "INVALID_ARGUMENT", /shape \[2147483648, 2147483648\] holds 4611686018427388000 float32 elements/);
  assertThrowsLLTM(() => Tensor.ones([2 ** 26, 2 ** 26, 2], { dtype: "float64" }), "INVALID_ARGUMENT", /more than the 9007199254740991 bytes/);
  assertThrowsLLTM(() => Tensor.randn([2 ** 40, 2 ** 20]), "INVALID_ARGUMENT", /bytes a tensor can have/);
});

test("a view too large to copy to the host is an LLTMError, not a RangeError", () => {
  using one = Tensor.ones([1]);
  using wide = one.expand([2 ** 40]);
  const e = (() => {
    try {
      wide.toTypedArray();
    } catch (e) {
      return e;
    }
  })();
  assert(e instanceof LLTMError, `expected an LLTMError, got ${e}`);
});

test("a device index beyond an int32 is refused, not wrapped to another device", () => {
  assertThrowsLLTM(() => Tensor.zeros([1], { device: "cuda:4294967296" }), "INVALID_DEVICE", /cuda:4294967296: the index must be at most 2147483647/);
  assertThrowsLLTM(() => Tensor.zeros([1], { device: "cuda:2147483648" }), "INVALID_DEVICE", /at most 2147483647/);
});

test("a module too large to hold is an LLTMError naming its sizes", () => {
  assertThrowsLLTM(() => new LLTMLayer(4, 2 ** 40), "INVALID_ARGUMENT", /LLTMLayer: weights of shape \[3298534883328, 1099511627780\]/);
  assertThrowsLLTM(() => new LLTMLayer(4, 2 ** 60), "INVALID_ARGUMENT", /positive integers/);
});

test("copyFrom and add_ from a view of the same memory read the values from before the call", () => {
  using x = Tensor.fromArray([[1, 2, 3], [4, 5, 6], [7, 8, 9]], { dtype: "float64" });
  using t = x.transpose();
  x.copyFrom(t);
  assertEquals(x.toArray(), [[1, 4, 7], [2, 5, 8], [3, 6, 9]]);
  using v = Tensor.fromArray([1, 2, 3, 4], { dtype: "float64" });
  using tail = v.narrow(0, 1, 3);
  using head = v.narrow(0, 0, 3);
  tail.add_(head);
  assertEquals(v.toArray(), [1, 3, 5, 7]);
  v.add_(v, 2);
  assertEquals(v.toArray(), [3, 9, 15, 21]);
  x.copyFrom(x);
  assertEquals(x.toArray(), [[1, 4, 7], [2, 5, 8], [3, 6, 9]]);
});

test("lltmBackwardAccumulate refuses gradients that share memory with an input, and writes nothing", () => {
  const o = { dtype: "float64" as const };
  const B = 2, F = 3, S = 4;
  using x = Tensor.randn([B, F], { ...o, seed: 1 }), w = Tensor.randn([3 * S, S + F], { ...o, seed: 2 });
  using b = Tensor.randn([3 * S], { ...o, seed: 3 }), h = Tensor.randn([B, S], { ...o, seed: 4 });
  using c = Tensor.randn([B, S], { ...o, seed: 5 }), g = Tensor.ones([B, S], o);
  using fw = lltmForward(x, w, b, h, c);
  using dB = Tensor.zeros([3 * S], o);
  const before = w.toArray();
  const call = (dWeights: Tensor, dBias: Tensor) => () =>
    lltmBackwardAccumulate(g, g, fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights, w, dWeights, dBias);
  assertThrowsLLTM(call(w, dB), "INVALID_ARGUMENT", /^lltmBackwardAccumulate: output 'dWeights' overlaps input 'weights' in memory/);
  assertEquals(w.toArray(), before, "weights untouched");
  using both = Tensor.zeros([3 * S * (S + F) + 3 * S], o);
  using dW = both.narrow(0, 0, 3 * S * (S + F)).reshape([3 * S, S + F]);
  using dBOverlapping = both.narrow(0, 3, 3 * S);
  assertThrowsLLTM(call(dW, dBOverlapping), "INVALID_ARGUMENT", /output '(dBias|dWeights)' overlaps output '(dWeights|dBias)'/);
  assert(both.toTypedArray().every((v) => v === 0), "gradients untouched");
});

test("the library's shape errors come back with the TypeScript names of the call", () => {
  const o = { dtype: "float32" as const };
  using x = Tensor.randn([2, 3], o), w = Tensor.randn([12, 7], o), b = Tensor.randn([12], o);
  using h = Tensor.randn([2, 4], o), c = Tensor.randn([2, 5], o);
  assertThrowsLLTM(() => lltmForward(x, w, b, h, c), "SHAPE_MISMATCH", /^lltmForward: 'oldCell' must have shape \[2, 4\] \(B, S\), got \[2, 5\]$/);
  using flatH = Tensor.randn([8], o);
  assertThrowsLLTM(() => lltmForward(x, w, b, flatH, c), "SHAPE_MISMATCH", /^lltmForward: 'oldH' must have 2 dimensions, got \[8\]$/);
  using a = Tensor.zeros([2, 3], o), t = Tensor.zeros([3, 2], o);
  assertThrowsLLTM(() => a.copyFrom(t), "SHAPE_MISMATCH", /^copyFrom: the tensor has shape \[2, 3\] but 'src' has shape \[3, 2\]/);
  assertThrowsLLTM(() => a.add_(t), "SHAPE_MISMATCH", /^add_: the tensor has shape \[2, 3\] but 'other' has shape \[3, 2\]/);
});

test("one LLTMFunction.backward, with or without an accumulation target, gives the same gradients", () => {
  const o = { dtype: "float64" as const };
  using x = Tensor.randn([3, 2], { ...o, seed: 1 }), w = Tensor.randn([12, 6], { ...o, seed: 2 });
  using b = Tensor.randn([12], { ...o, seed: 3 }), h = Tensor.randn([3, 4], { ...o, seed: 4 });
  using c = Tensor.randn([3, 4], { ...o, seed: 5 }), g = Tensor.randn([3, 4], { ...o, seed: 6 });
  using plain = LLTMFunction.forward(x, w, b, h, c);
  using into = LLTMFunction.forward(x, w, b, h, c);
  using grads = plain.backward(g, g);
  using dWeights = Tensor.ones([12, 6], o), dBias = Tensor.ones([12], o);
  using state = into.backward(g, g, { dWeights, dBias });
  assertEquals(state.dInput.toArray(), grads.dInput.toArray());
  assertEquals(state.dOldCell.toArray(), grads.dOldCell.toArray());
  assertAddedOne(dWeights.toTypedArray(), grads.dWeights.toTypedArray(), "dWeights");
  assertAddedOne(dBias.toTypedArray(), grads.dBias.toTypedArray(), "dBias");
});

function assertAddedOne(actual: ArrayLike<number>, grads: ArrayLike<number>, what: string): void {
  assertEquals(actual.length, grads.length, what);
  for (let i = 0; i < grads.length; i++) {
    const expected = grads[i]! + 1;
    assert(Math.abs(actual[i]! - expected) <= 1e-12 * (1 + Math.abs(expected)), `${what}[${i}]: ${actual[i]} vs ${expected}`);
  }
}

test("the saved weights outlive the caller's reference (an explicit retain)", () => {
  const o = { dtype: "float64" as const };
  using x = Tensor.randn([1, 2], { ...o, seed: 1 }), b = Tensor.randn([3], { ...o, seed: 3 });
  using h = Tensor.randn([1, 1], { ...o, seed: 4 }), c = Tensor.randn([1, 1], { ...o, seed: 5 }), g = Tensor.ones([1, 1], o);
  const w = Tensor.randn([3, 3], { ...o, seed: 2 });
  using expected = lltmForward(x, w, b, h, c);
  using fn = LLTMFunction.forward(x, w, b, h, c);
  w.dispose();
  using grads = fn.backward(g, g);
  assertEquals(grads.dWeights.shape, [3, 3]);
  assert(w.disposed, "the caller's reference is gone");
  assert(grads.dWeights.toTypedArray().every(Number.isFinite), "finite gradients from the retained weights");
});

test("LLTMLayer.to moves in place (a no-op on the same device) and copyTo makes an independent copy", () => {
  using m = new LLTMLayer(2, 3, { seed: 1 });
  const weights = m.weights;
  assert(m.to("cpu") === m, "to returns the module");
  assert(m.weights === weights, "same device: the same tensors");
  using copy = m.copyTo("cpu");
  assertEquals(copy.weights.toArray(), m.weights.toArray());
  copy.weights.fill(0);
  assert(m.weights.toTypedArray().some((v) => v !== 0), "the copy has memory of its own");
});

test("LLTMLayer.to moves the parameters and gradients to the GPU in place", () => {
  using m = new LLTMLayer(2, 3, { seed: 1 });
  const before = m.weights.toArray();
  const old = m.weights;
  assert(m.to("cuda") === m, "to returns the module");
  assertEquals(String(m.device), "cuda:0");
  assertEquals(String(m.weightsGrad.device), "cuda:0");
  assert(old.disposed, "the CPU tensors are released");
  assertEquals(m.weights.toArray(), before);
}, { skip: cudaSkipReason() });

test("a small host block is reused only once no view of it is left", () => {
  const a = Tensor.fromArray([1, 2, 3, 4], { dtype: "float64" });
  const address = a.dataAddress;
  const view = a.narrow(0, 1, 2);
  a.dispose();
  using b = Tensor.zeros([4], { dtype: "float64" });
  assert(b.dataAddress !== address, "a block with a live view is not handed out again");
  assertEquals(view.toArray(), [2, 3]);
  view.dispose();
  using c = Tensor.full([4], 7, { dtype: "float64" });
  assertEquals(c.dataAddress, address, "the released block serves the next allocation of its size");
  assertEquals(c.toArray(), [7, 7, 7, 7]);
});
