/** The LLTM module, backpropagation through time, and the optimizers. */
import fc from "fast-check";

import { Adam, type DType, LLTMLayer, lltmBackward, lltmBackwardAccumulate, lltmForward, SGD, sequenceGradcheck, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";
import { tolerance } from "./helpers.ts";

const devices = [["cpu", false], ["cuda", cudaSkipReason()]] as const;

test("LLTM initialises weights [3S, S+F] and bias [3S] uniformly in ±1/√S, reproducibly", () => {
  using a = new LLTMLayer(5, 7, { seed: 3, dtype: "float64" });
  using b = new LLTMLayer(5, 7, { seed: 3, dtype: "float64" });
  assertEquals(a.weights.shape, [21, 12]);
  assertEquals(a.bias.shape, [21]);
  const bound = 1 / Math.sqrt(7);
  const w = a.weights.toTypedArray();
  assert(w.every((v) => Math.abs(v) <= bound), "weights within the bound");
  assert(Math.max(...w) > bound * 0.8 && Math.min(...w) < -bound * 0.8, "weights spread over the range");
  assertEquals(Array.from(w), Array.from(b.weights.toTypedArray()));
  assertEquals(a.parameters().map((p) => p.name), ["weights", "bias"]);
});

test("a module step is the op, and its gradients accumulate until zeroGrad", () => {
  const sizes = fc.record({ F: fc.integer({ min: 1, max: 9 }), S: fc.integer({ min: 1, max: 17 }), B: fc.integer({ min: 1, max: 7 }) });
  fc.assert(
    fc.property(sizes, fc.constantFrom<DType>("float32", "float64"), fc.integer({ min: 0, max: 1000 }), ({ F, S, B }, dtype, seed) => {
      using m = new LLTMLayer(F, S, { seed, dtype });
      using x = Tensor.randn([B, F], { dtype, seed: seed + 1 });
      const [h, c] = m.initialState(B);
      try {
        using step = m.forward(x, [h, c]);
        using direct = lltmForward(x, m.weights, m.bias, h, c);
        assertEquals(step.newH.toArray(), direct.newH.toArray());
        using gh = Tensor.ones([B, S], { dtype });
        using gc = Tensor.zeros([B, S], { dtype });
        step.backward(gh, gc).dispose();
        const once = m.weightsGrad.toTypedArray();
        using again = m.forward(x, [h, c]);
        again.backward(gh, gc).dispose();
        assertClose(m.weightsGrad.toTypedArray(), once.map((v) => 2 * v), dtype, "accumulated d_weights");
        assertThrowsLLTM(() => step.backward(gh, gc), "INVALID_ARGUMENT", /already run/);
        m.zeroGrad();
        assert(m.weightsGrad.toTypedArray().every((v) => v === 0), "zeroGrad clears");
      } finally {
        h.dispose();
        c.dispose();
      }
    }),
    { numRuns: 20 },
  );
});

for (const [device, skip] of devices) {
  test(`gradients through an 8-step sequence match finite differences in float64 on ${device}`, () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 4 }), (seed, batch, state) => {
        const { errors, maxError } = sequenceGradcheck({ steps: 8, batch, state, features: 2, seed, device });
        assert(maxError <= 1e-6, `seed ${seed}: ${JSON.stringify(errors)}`);
      }),
      { numRuns: 3 },
    );
  }, { skip });

  test(`one SGD step (with momentum) and one Adam step match the hand-computed update on ${device}`, () => {
    const hyper = fc.record({
      lr: fc.double({ min: 1e-4, max: 0.5, noNaN: true }),
      momentum: fc.double({ min: 0, max: 0.95, noNaN: true }),
      beta1: fc.double({ min: 0.5, max: 0.99, noNaN: true }),
      beta2: fc.double({ min: 0.9, max: 0.9999, noNaN: true }),
      eps: fc.double({ min: 1e-10, max: 1e-3, noNaN: true }),
      seed: fc.integer({ min: 0, max: 1000 }),
      dtype: fc.constantFrom<DType>("float32", "float64"),
    });
    fc.assert(
      fc.property(hyper, ({ lr, momentum, beta1, beta2, eps, seed, dtype }) => {
        using m = new LLTMLayer(2, 3, { seed, dtype, device });
        using g = Tensor.randn(m.weights.shape, { dtype, device, seed: seed + 1 });
        m.weightsGrad.copyFrom(g);
        m.biasGrad.fill(0.5);
        const p0 = m.weights.toTypedArray(), grad = g.toTypedArray();
        // Two SGD steps with the same gradient: the second uses the momentum buffer.
        using sgd = new SGD(m.parameters(), { lr, momentum });
        sgd.step();
        sgd.step();
        const afterSgd = m.weights.toTypedArray();
        const expectedSgd = p0.map((p, i) => p - lr * grad[i]! - lr * (momentum * grad[i]! + grad[i]!));
        assertClose(afterSgd, expectedSgd, dtype, "SGD");
        const p1 = m.weights.toTypedArray();
        using adam = new Adam(m.parameters(), { lr, betas: [beta1, beta2], eps });
        adam.step();
        const expectedAdam = p1.map((p, i) => {
          const mt = (1 - beta1) * grad[i]!, vt = (1 - beta2) * grad[i]! * grad[i]!;
          return p - (lr / (1 - beta1)) * mt / (Math.sqrt(vt) / Math.sqrt(1 - beta2) + eps);
        });
        assertClose(m.weights.toTypedArray(), expectedAdam, dtype, "Adam");
      }),
      { numRuns: 20 },
    );
  }, { skip });
}

function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, dtype: DType, what: string): void {
  for (let i = 0; i < expected.length; i++) {
    const tol = tolerance[dtype] * 10 * (1 + Math.abs(expected[i]!));
    assert(Math.abs(actual[i]! - expected[i]!) <= tol, `${what}[${i}]: ${actual[i]} vs ${expected[i]}`);
  }
}

test("optimizer hyperparameters out of range are refused by name, in the constructor", () => {
  using m = new LLTMLayer(2, 2);
  assertThrowsLLTM(() => new SGD(m.parameters(), { lr: 0.1, momentum: 1.5 }), "INVALID_ARGUMENT", /^SGD: 'momentum' must be in \[0\.000000, 1\.000000\)/);
  assertThrowsLLTM(() => new Adam(m.parameters(), { lr: -1 }), "INVALID_ARGUMENT", /^Adam: 'lr' must be in/);
});

for (const [device, skip] of devices) {
  test(`lltmBackwardAccumulate adds the parameter gradients to what they hold, on ${device}`, () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 40 }), fc.constantFrom<DType>("float32", "float64"), (B, F, S, dtype) => {
        const o = { dtype, device };
        using x = Tensor.randn([B, F], { ...o, seed: 1 }), w = Tensor.randn([3 * S, S + F], { ...o, seed: 2 });
        using b = Tensor.randn([3 * S], { ...o, seed: 3 }), h = Tensor.randn([B, S], { ...o, seed: 4 });
        using c = Tensor.randn([B, S], { ...o, seed: 5 }), gh = Tensor.randn([B, S], { ...o, seed: 6 });
        using gc = Tensor.randn([B, S], { ...o, seed: 7 });
        using fw = lltmForward(x, w, b, h, c);
        const saved = [fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights, w] as const;
        using plain = lltmBackward(gh, gc, ...saved);
        using dW = Tensor.randn([3 * S, S + F], { ...o, seed: 8 }), dB = Tensor.randn([3 * S], { ...o, seed: 9 });
        const w0 = dW.toTypedArray(), b0 = dB.toTypedArray();
        using acc = lltmBackwardAccumulate(gh, gc, ...saved, dW, dB);
        assertClose(dW.toTypedArray(), w0.map((v, i) => v + plain.dWeights.toTypedArray()[i]!), dtype, "d_weights");
        assertClose(dB.toTypedArray(), b0.map((v, i) => v + plain.dBias.toTypedArray()[i]!), dtype, "d_bias");
        assertEquals(Array.from(acc.dInput.toTypedArray()), Array.from(plain.dInput.toTypedArray()));
        assertEquals(Array.from(acc.dOldCell.toTypedArray()), Array.from(plain.dOldCell.toTypedArray()));
      }),
      { numRuns: 20 },
    );
  }, { skip });
}
