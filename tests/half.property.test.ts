/**
 * Every op in bfloat16 and float16, on the CPU and (where present) CUDA,
 * against the float64 reference on the same
 * inputs, rounded to the half type (the reference reads the tensors' values
 * back, so it sees exactly what the kernels see): the step forward and
 * backward, the sequence forward and backward, linear and its backward, fill,
 * axpy, SGD and Adam; and mixed storage (bfloat16 activations with float32
 * weights and cell state), which the library accepts.
 *
 * Tolerances (tests/helpers.ts `tolerance`): the kernels compute in float32
 * and round each output once to the half type, at most the unit roundoff u
 * relative (bfloat16 u = 2^-8 ≈ 3.9e-3, float16 u = 2^-11 ≈ 4.9e-4), measured
 * as tests/helpers.ts's norm-based error; the bounds are 2.5u and 4u (the
 * step backward's products may take gate gradients rounded to the half type,
 * so its sums are judged against their terms' magnitudes too: helpers.ts's
 * sumError). A
 * sequence carries its state from step to step: each later step's products
 * read two operands rounded to u each, and what they add enters the state the
 * next reads, so its bound grows by 2u a step. The roundings need not be
 * independent (a gradient carried back through all T steps can add them in
 * one direction: bfloat16's dH0 at T = 8 has measured 3.0e-2, past a sqrt(T)
 * growth's 2.8e-2), with T at most 8 here.
 */
import fc from "fast-check";

import {
  Adam, type DType, linear, linearBackward, lltmBackward, lltmForward, lltmSequenceBackward, lltmSequenceForward,
  type Parameter, referenceBackward, referenceForward, SGD, Tensor,
} from "../ts/index.ts";
import { assert, cudaSkipReason, test } from "./harness.ts";
import { assertClose as close, randnScaled as randn, stepMagnitudes, tolerance, unitRoundoff } from "./helpers.ts";
import { referenceLinear, referenceLinearBackward } from "./linear_reference.ts";
import { referenceSequence } from "./sequence_reference.ts";

const halves = ["bfloat16", "float16"] as const;
const size = fc.integer({ min: 1, max: 12 });
const seed = fc.integer({ min: 0, max: 1 << 20 });
const runs = { numRuns: 12 };

type DeviceName = "cpu" | "cuda";
const devices: readonly DeviceName[] = ["cpu", "cuda"];
const skipOn = (device: DeviceName) => (device === "cuda" ? cudaSkipReason() : false);

/** Seeded normal values times `scale`, stored as `dtype` on `device`. */
/** The step's tensors: activations in `act`, weights and bias in `param`, the cell state in `cell`. */
function stepInputs(B: number, F: number, S: number, s: number, act: DType, param: DType, cell: DType, device: DeviceName) {
  const t = {
    input: randn([B, F], s, act, 1, device),
    weights: randn([3 * S, S + F], s + 1, param, 1 / Math.sqrt(S + F), device),
    bias: randn([3 * S], s + 2, param, 1, device),
    oldH: randn([B, S], s + 3, act, 1, device),
    oldCell: randn([B, S], s + 4, cell, 1, device),
    [Symbol.dispose]() {
      for (const x of [t.input, t.weights, t.bias, t.oldH, t.oldCell]) x.dispose();
    },
  };
  return t;
}

const forwardNames = ["newH", "newCell", "inputGate", "outputGate", "candidateCell", "X", "gateWeights"] as const;
const backwardNames = ["dOldH", "dInput", "dWeights", "dBias", "dOldCell"] as const;

for (const device of devices) for (const dt of halves) {
  const tol = tolerance[dt];
  const on = { skip: skipOn(device) };
  /** randn on this device. */
  const rand = (shape: number[], s: number, dtype: DType, scale = 1) => randn(shape, s, dtype, scale, device);

  test(`step forward and backward in ${dt} match the float64 reference on ${device}`, () => {
    fc.assert(fc.property(size, size, size, seed, (B, F, S, s) => {
      using a = stepInputs(B, F, S, s, dt, dt, dt, device);
      using fw = lltmForward(a.input, a.weights, a.bias, a.oldH, a.oldCell);
      const ref = referenceForward(a.input, a.weights, a.bias, a.oldH, a.oldCell);
      for (const name of forwardNames) {
        assert(fw[name].dtype === dt, `${name} is ${fw[name].dtype}`);
        close(`${dt} ${name} ${B}x${F}x${S}`, fw[name], ref[name].data, tol);
      }
      using gradH = rand([B, S], s + 5, dt);
      using gradCell = rand([B, S], s + 6, dt);
      const saved = [fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights] as const;
      using g = lltmBackward(gradH, gradCell, ...saved, a.weights);
      const rg = referenceBackward(gradH, gradCell, ...saved, a.weights);
      for (const name of backwardNames) close(`${dt} ${name} ${B}x${F}x${S}`, g[name], rg[name].data, tol, stepMagnitudes(rg, name));
    }), runs);
  }, on);

  test(`sequence forward and backward in ${dt} match the float64 reference on ${device}`, () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 8 }), size, size, size, seed, (T, B, F, S, s) => {
      const bound = tol + (T - 1) * 2 * unitRoundoff[dt];
      using a = stepInputs(B, F, S, s, dt, dt, dt, device);
      using inputs = rand([T, B, F], s + 7, dt);
      using gradOutputs = rand([T, B, S], s + 8, dt);
      using gradLastCell = rand([B, S], s + 9, dt);
      using fw = lltmSequenceForward(inputs, a.weights, a.bias, a.oldH, a.oldCell);
      using bw = lltmSequenceBackward(gradOutputs, undefined, gradLastCell, fw.reserve!, inputs, a.weights, a.oldH);
      const ref = referenceSequence(inputs, a.weights, a.bias, a.oldH, a.oldCell, gradOutputs, undefined, gradLastCell);
      const what = `${dt} T=${T} ${B}x${F}x${S}`;
      close(`${what} outputs`, fw.outputs, ref.outputs, bound);
      close(`${what} lastH`, fw.lastH, ref.lastH, bound);
      close(`${what} lastCell`, fw.lastCell, ref.lastCell, bound);
      for (const name of ["dInputs", "dWeights", "dBias", "dH0", "dC0"] as const) close(`${what} ${name}`, bw[name], ref[name], bound);
    }), runs);
  }, on);

  test(`linear and its backward in ${dt} match the float64 reference on ${device}`, () => {
    fc.assert(fc.property(size, size, size, fc.boolean(), seed, (N, K, M, withBias, s) => {
      using x = rand([N, K], s, dt);
      using w = rand([M, K], s + 1, dt, 1 / Math.sqrt(K));
      using b = rand([M], s + 2, dt);
      using y = linear(x, w, withBias ? b : undefined);
      close(`${dt} linear ${N}x${K}x${M}`, y, referenceLinear(x, w, withBias ? b : undefined), tol);
      using gy = rand([N, M], s + 3, dt);
      using g = linearBackward(gy, x, w);
      const ref = referenceLinearBackward(gy, x, w);
      close(`${dt} dX`, g.dX!, ref.dX, tol);
      close(`${dt} dWeight`, g.dWeight!, ref.dWeight, tol);
      close(`${dt} dBias`, g.dBias!, ref.dBias, tol);
    }), runs);
  }, on);

  test(`fill and axpy in ${dt} round once to the storage type on ${device}`, () => {
    fc.assert(fc.property(size, size, fc.double({ min: -1e4, max: 1e4, noNaN: true }), seed, (r, c, alpha, s) => {
      using y = rand([r, c], s, dt);
      using x = rand([r, c], s + 1, dt);
      const expected = Float64Array.from(y.toTypedArray(), (v, i) => v + alpha * x.toTypedArray()[i]!);
      y.add_(x, alpha);
      close(`${dt} axpy`, y, expected, tol);
      using f = Tensor.full([r, c], alpha, { dtype: dt, device });
      close(`${dt} fill`, f, new Float64Array(r * c).fill(alpha), tol);
    }), runs);
  }, on);

  test(`SGD and Adam steps in ${dt} match their formulas in float64 on ${device}`, () => {
    fc.assert(fc.property(size, seed, fc.double({ min: 0, max: 0.9, noNaN: true }), (n, s, momentum) => {
      const param = (k: number): Parameter => ({ name: `p${k}`, value: rand([n], s + k, dt), grad: rand([n], s + 10 + k, dt) });
      const p = param(0), q = param(1);
      try {
        const p0 = Float64Array.from(p.value.toTypedArray()), g0 = Float64Array.from(p.grad.toTypedArray());
        {
          using sgd = new SGD([p], { lr: 0.1, momentum });
          sgd.step();
          // The first step: the momentum buffer starts at the gradient.
          close(`${dt} SGD`, p.value, p0.map((v, i) => v - 0.1 * g0[i]!), tol);
        }
        const q0 = Float64Array.from(q.value.toTypedArray()), h0 = Float64Array.from(q.grad.toTypedArray());
        using adam = new Adam([q], { lr: 1e-2 });
        adam.step();
        // Step 1: exp_avg = (1 - b1) g, exp_avg_sq = (1 - b2) g^2, bias-corrected to g and g^2.
        close(`${dt} Adam`, q.value, q0.map((v, i) => v - 1e-2 * h0[i]! / (Math.abs(h0[i]!) + 1e-8)), tol);
      } finally {
        for (const t of [p.value, p.grad, q.value, q.grad]) t.dispose();
      }
    }), runs);
  }, on);
}

for (const device of devices) test(`mixed storage on ${device}: bfloat16 activations with float32 weights and cell state match the reference`, () => {
  fc.assert(fc.property(size, size, size, seed, (B, F, S, s) => {
    using a = stepInputs(B, F, S, s, "bfloat16", "float32", "float32", device);
    using fw = lltmForward(a.input, a.weights, a.bias, a.oldH, a.oldCell);
    assert(fw.newH.dtype === "bfloat16" && fw.newCell.dtype === "float32", `newH ${fw.newH.dtype}, newCell ${fw.newCell.dtype}`);
    const ref = referenceForward(a.input, a.weights, a.bias, a.oldH, a.oldCell);
    for (const name of forwardNames) close(`mixed ${name}`, fw[name], ref[name].data, fw[name].dtype === "float32" ? tolerance.float32 : tolerance.bfloat16);
    using gradH = randn([B, S], s + 5, "bfloat16", 1, device);
    using gradCell = randn([B, S], s + 6, "float32", 1, device);
    const saved = [fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights] as const;
    using g = lltmBackward(gradH, gradCell, ...saved, a.weights);
    assert(g.dWeights.dtype === "float32" && g.dBias.dtype === "float32", "float32 weights get float32 gradients");
    const rg = referenceBackward(gradH, gradCell, ...saved, a.weights);
    for (const name of backwardNames) close(`mixed ${name}`, g[name], rg[name].data, tolerance.bfloat16, stepMagnitudes(rg, name));
  }), runs);
}, { skip: skipOn(device) });
