/**
 * The CPU's bfloat16 step kernels (csrc/cpu/lltm_bf16.cpp: vdpbf16ps products
 * with float32 sums, on CPUs with AVX512_BF16; elsewhere the same calls are
 * staged through float32) against the float64 reference on the same rounded
 * inputs, at sizes that cross their edges: K = S + F odd (a pair padded with
 * zero), batches not a multiple of the 8-row tiles, state sizes across the
 * 32-unit column panels and the 16-lane vectors, and the accumulating
 * backward, into bfloat16 gradients or float32 ones (mixed precision's,
 * beside bfloat16 weights).
 *
 * Tolerances, in the norm-based error of tests/helpers.ts: each forward
 * output is rounded once to bfloat16 from float32 sums of exact products
 * (unit roundoff u = 2^-8), within tolerance.bfloat16 (1e-2, 2.5u). The
 * backward rounds the gate gradients to bfloat16 before its products, as any
 * bfloat16 product's operands are, then rounds the results: two roundings of
 * u each, so 2 × 1e-2.
 */
import fc from "fast-check";

import { lltmBackward, lltmBackwardAccumulate, lltmForward, referenceBackward, referenceForward, Tensor } from "../ts/index.ts";
import { assert, test } from "./harness.ts";
import { referenceError, tolerance } from "./helpers.ts";

const forwardTol = tolerance.bfloat16, backwardTol = 2 * tolerance.bfloat16;

function close(what: string, actual: Tensor, expected: ArrayLike<number>, tol: number): void {
  const err = referenceError(actual.toTypedArray(), expected);
  assert(err <= tol, `${what}: error ${err} > ${tol}`);
}

const randn = (shape: number[], seed: number, scale = 1) => {
  using t = Tensor.randn(shape, { seed });
  return Tensor.fromTypedArray(t.toTypedArray().map((v) => v * scale), shape, { dtype: "bfloat16" });
};

test("bfloat16 step forward and backward across the kernels' tile edges match the float64 reference", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 70 }), fc.boolean(), fc.boolean(), fc.nat(1 << 20),
      (B, F, S, accumulate, wideGrads, s) => {
        using input = randn([B, F], s), oldH = randn([B, S], s + 3), oldCell = randn([B, S], s + 4);
        using weights = randn([3 * S, S + F], s + 1, 1 / Math.sqrt(S + F)), bias = randn([3 * S], s + 2);
        using fw = lltmForward(input, weights, bias, oldH, oldCell);
        const ref = referenceForward(input, weights, bias, oldH, oldCell);
        const what = `${B}x${F}x${S}`;
        for (const name of ["newH", "newCell", "inputGate", "outputGate", "candidateCell", "X", "gateWeights"] as const) {
          assert(fw[name].dtype === "bfloat16", `${name} is ${fw[name].dtype}`);
          close(`${name} ${what}`, fw[name], ref[name].data, forwardTol);
        }
        using gradH = randn([B, S], s + 5), gradCell = randn([B, S], s + 6);
        const saved = [fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights] as const;
        const rg = referenceBackward(gradH, gradCell, ...saved, weights);
        if (!accumulate) {
          using g = lltmBackward(gradH, gradCell, ...saved, weights);
          for (const name of ["dOldH", "dInput", "dWeights", "dBias", "dOldCell"] as const) {
            close(`${name} ${what}`, g[name], rg[name].data, backwardTol);
          }
          return;
        }
        // Added into gradients holding a first copy of the reference's: the result is twice it.
        const gradType = wideGrads ? "float32" : "bfloat16";
        using dWeights = Tensor.fromTypedArray(Float32Array.from(rg.dWeights.data), [3 * S, S + F], { dtype: gradType });
        using dBias = Tensor.fromTypedArray(Float32Array.from(rg.dBias.data), [3 * S], { dtype: gradType });
        using g = lltmBackwardAccumulate(gradH, gradCell, ...saved, weights, dWeights, dBias);
        assert(dWeights.dtype === gradType && dBias.dtype === gradType, `gradients stay ${gradType}`);
        close(`accumulated dWeights ${what}`, dWeights, rg.dWeights.data.map((v) => 2 * v), backwardTol);
        close(`accumulated dBias ${what}`, dBias, rg.dBias.data.map((v) => 2 * v), backwardTol);
        close(`dOldH ${what}`, g.dOldH, rg.dOldH.data, backwardTol);
      },
    ),
    { numRuns: 40 },
  );
});
