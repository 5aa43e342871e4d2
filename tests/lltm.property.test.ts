/** Native forward and backward against the float64 reference: random sizes, layouts and dtypes. */
import fc from "fast-check";

import { type DeviceLike, lltmBackward, lltmForward, referenceBackward, referenceForward } from "../ts/index.ts";
import { assert, cudaSkipReason, test } from "./harness.ts";
import { caseSizes, disposeAll, dtype, layout, makeInput, referenceError, relayout, tolerance } from "./helpers.ts";

const forwardOutputs = ["newH", "newCell", "inputGate", "outputGate", "candidateCell", "X", "gateWeights"] as const;
const backwardOutputs = ["dOldH", "dInput", "dWeights", "dBias", "dOldCell"] as const;

const inputLayouts = fc.record({
  input: layout, weights: layout, bias: layout, oldH: layout, oldCell: layout,
});

function forwardProperty(device: DeviceLike) {
  return fc.property(caseSizes, dtype, inputLayouts, fc.integer({ min: 0, max: 1 << 20 }), ({ batch: B, features: F, state: S }, dt, lay, seed) => {
    using input = makeInput([B, F], lay.input, seed, dt, device);
    using weights = makeInput([3 * S, S + F], lay.weights, seed + 1, dt, device, 1 / Math.sqrt(S + F));
    using bias = makeInput([3 * S], lay.bias, seed + 2, dt, device);
    using oldH = makeInput([B, S], lay.oldH, seed + 3, dt, device);
    using oldCell = makeInput([B, S], lay.oldCell, seed + 4, dt, device);
    using out = lltmForward(input, weights, bias, oldH, oldCell);
    const ref = referenceForward(input, weights, bias, oldH, oldCell);
    for (const name of forwardOutputs) {
      const err = referenceError(out[name].toTypedArray(), ref[name].data);
      assert(err <= tolerance[dt], `${dt} ${name} ${B}x${F}x${S}: error ${err} > ${tolerance[dt]}`);
    }
  });
}

function backwardProperty(device: DeviceLike) {
  const savedLayouts = fc.record({ gradH: layout, gradCell: layout, saved: layout, weights: layout });
  return fc.property(caseSizes, dtype, savedLayouts, fc.integer({ min: 0, max: 1 << 20 }), ({ batch: B, features: F, state: S }, dt, lay, seed) => {
    using input = makeInput([B, F], "contiguous", seed, dt, device);
    using weights = makeInput([3 * S, S + F], lay.weights, seed + 1, dt, device, 1 / Math.sqrt(S + F));
    using bias = makeInput([3 * S], "contiguous", seed + 2, dt, device);
    using oldH = makeInput([B, S], "contiguous", seed + 3, dt, device);
    using oldCell = makeInput([B, S], "contiguous", seed + 4, dt, device);
    using fw = lltmForward(input, weights, bias, oldH, oldCell);
    using gradH = makeInput([B, S], lay.gradH, seed + 5, dt, device);
    using gradCell = makeInput([B, S], lay.gradCell, seed + 6, dt, device);
    const saved = [fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights].map((t) => relayout(t, lay.saved));
    try {
      const [newCell, inputGate, outputGate, candidateCell, X, gateWeights] = saved as [typeof fw.X, typeof fw.X, typeof fw.X, typeof fw.X, typeof fw.X, typeof fw.X];
      using grads = lltmBackward(gradH, gradCell, newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights);
      const ref = referenceBackward(gradH, gradCell, newCell, inputGate, outputGate, candidateCell, X, gateWeights, weights);
      for (const name of backwardOutputs) {
        const err = referenceError(grads[name].toTypedArray(), ref[name].data);
        assert(err <= tolerance[dt], `${dt} ${name} ${B}x${F}x${S}: error ${err} > ${tolerance[dt]}`);
      }
    } finally {
      disposeAll(...saved);
    }
  });
}

const runs = { numRuns: 60 };

test("forward matches the float64 reference on the CPU (sizes, layouts, dtypes)", () => {
  fc.assert(forwardProperty("cpu"), runs);
});

test("backward matches the float64 reference on the CPU (sizes, layouts, dtypes)", () => {
  fc.assert(backwardProperty("cpu"), runs);
});

test("forward matches the float64 reference on CUDA", () => {
  fc.assert(forwardProperty("cuda"), runs);
}, { skip: cudaSkipReason() });

test("backward matches the float64 reference on CUDA", () => {
  fc.assert(backwardProperty("cuda"), runs);
}, { skip: cudaSkipReason() });
