/** Native forward and backward against the float64 reference: random sizes, layouts and dtypes. */
import fc from "fast-check";

import {
  type DeviceLike, type DType, lltmBackward, lltmBackwardAccumulate, lltmForward, referenceBackward, referenceForward, Tensor,
} from "../ts/index.ts";
import { assert, cudaSkipReason, test } from "./harness.ts";
import {
  caseSizes, disposeAll, dtype, layout, makeInput, referenceError, relayout, stepMagnitudes, sumError, tolerance,
} from "./helpers.ts";

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
        const err = sumError(grads[name].toTypedArray(), ref[name].data, stepMagnitudes(ref, name));
        assert(err <= tolerance[dt], `${dt} ${name} ${B}x${F}x${S}: error ${err} > ${tolerance[dt]}`);
      }
    } finally {
      disposeAll(...saved);
    }
  });
}

// gradOutput, a second gradient of newH, gives what its sum with gradH gives: every float type, since the
// CUDA half-type kernels read it as they are (the reference sums the two in float64).
function gradOutputProperty(device: DeviceLike) {
  const floatType = fc.constantFrom<DType>("float32", "float64", "bfloat16", "float16");
  const lays = fc.record({ gradH: layout, gradOutput: layout });
  return fc.property(caseSizes, floatType, lays, fc.boolean(), fc.integer({ min: 0, max: 1 << 20 }), ({ batch: B, features: F, state: S }, dt, lay, accumulate, seed) => {
    using input = makeInput([B, F], "contiguous", seed, dt, device);
    using weights = makeInput([3 * S, S + F], "contiguous", seed + 1, dt, device, 1 / Math.sqrt(S + F));
    using bias = makeInput([3 * S], "contiguous", seed + 2, dt, device);
    using oldH = makeInput([B, S], "contiguous", seed + 3, dt, device);
    using oldCell = makeInput([B, S], "contiguous", seed + 4, dt, device);
    using fw = lltmForward(input, weights, bias, oldH, oldCell);
    using gradH = makeInput([B, S], lay.gradH, seed + 5, dt, device);
    using gradCell = makeInput([B, S], "contiguous", seed + 6, dt, device);
    using gradOutput = makeInput([B, S], lay.gradOutput, seed + 7, dt, device);
    const saved = [fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights, weights] as const;
    const [h, o] = [gradH.toTypedArray(), gradOutput.toTypedArray()];
    using summed = Tensor.fromTypedArray(Float64Array.from(h, (v, i) => v + o[i]!), [B, S], { dtype: "float64" });
    const ref = referenceBackward(summed, gradCell, ...saved);
    const tol = tolerance[dt];
    const checkAll = (what: string, got: Partial<Record<(typeof backwardOutputs)[number], { toTypedArray(): ArrayLike<number> }>>) => {
      for (const name of backwardOutputs) {
        const t = got[name];
        if (t === undefined) continue;
        const err = sumError(t.toTypedArray(), ref[name].data, stepMagnitudes(ref, name));
        assert(err <= tol, `${dt} ${what} ${name} ${B}x${F}x${S} (${lay.gradH}, ${lay.gradOutput}): error ${err} > ${tol}`);
      }
    };
    if (!accumulate) {
      using grads = lltmBackward(gradH, gradCell, ...saved, { gradOutput });
      checkAll("lltmBackward", grads);
      return;
    }
    using dWeights = Tensor.zeros([3 * S, S + F], { dtype: dt, device });
    using dBias = Tensor.zeros([3 * S], { dtype: dt, device });
    using grads = lltmBackwardAccumulate(gradH, gradCell, ...saved, dWeights, dBias, { gradOutput });
    checkAll("lltmBackwardAccumulate", { dOldH: grads.dOldH, dInput: grads.dInput, dOldCell: grads.dOldCell, dWeights, dBias });
  });
}

const runs = { numRuns: 60 };

test("backward with gradOutput matches the reference given gradH + gradOutput, on the CPU", () => {
  fc.assert(gradOutputProperty("cpu"), { numRuns: 40 });
});

test("backward with gradOutput matches the reference given gradH + gradOutput, on CUDA", () => {
  fc.assert(gradOutputProperty("cuda"), { numRuns: 40 });
}, { skip: cudaSkipReason() });


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
