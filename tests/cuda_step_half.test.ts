/**
 * The step (lltmForward, lltmBackward, lltmBackwardAccumulate) on CUDA in
 * bfloat16 and float16 runs as it is (cuda/step/half.cu): its products on
 * tensor cores with float32 sums, the cell's math in float, no float32 copy
 * of any tensor, which the device memory the calls take shows (a float32
 * copy of the weights alone would take twice their bytes). At a size where a
 * float32 step takes cuBLAS, with the weights in either layout, its results
 * match the float64 reference on the same rounded inputs.
 *
 * Tolerances (tests/helpers.ts `tolerance`: 2.5u for bfloat16, 4u for
 * float16, u its unit roundoff): the forward's gates are summed in float32
 * and kept so until activated, and each output is rounded once (u/2); the
 * backward rounds the gate gradients once to the half type before its
 * products, and the products' results once (u in all; a float64 model of
 * these roundings over 400 random cases gave at most 1.3u).
 */
import { cuda, type DType, lltmBackward, lltmBackwardAccumulate, lltmForward, referenceBackward, referenceForward, Tensor } from "../ts/index.ts";
import { assert, assertEquals, cudaSkipReason, test } from "./harness.ts";
import { assertClose as close, randnScaled, tolerance } from "./helpers.ts";

const skip = cudaSkipReason();

const randn = (shape: number[], seed: number, dtype: DType, scale = 1) => randnScaled(shape, seed, dtype, scale, "cuda");

const bytes = (ts: readonly Tensor[]) => ts.reduce((sum, t) => sum + t.numel * t.itemSize, 0);

for (const dt of ["bfloat16", "float16"] as const) {
  test(`CUDA step forward and backward in ${dt} at cuBLAS sizes match the float64 reference, in both weight layouts`, () => {
    const B = 64, F = 136, S = 200, K = S + F, tol = tolerance[dt];
    using input = randn([B, F], 1, dt);
    using bias = randn([3 * S], 3, dt);
    using oldH = randn([B, S], 4, dt);
    using oldCell = randn([B, S], 5, dt);
    using gradH = randn([B, S], 6, dt);
    using gradCell = randn([B, S], 7, dt);
    using rowMajor = randn([3 * S, K], 2, dt, 1 / Math.sqrt(K));
    using columnMajor = randn([K, 3 * S], 2, dt, 1 / Math.sqrt(K));
    for (const [layout, weights] of [["row-major", rowMajor], ["column-major", columnMajor.transpose(0, 1)]] as const) {
      const what = `${dt} ${layout}`;
      using fw = lltmForward(input, weights, bias, oldH, oldCell);
      const ref = referenceForward(input, weights, bias, oldH, oldCell);
      for (const name of ["newH", "newCell", "inputGate", "outputGate", "candidateCell", "X", "gateWeights"] as const) {
        assertEquals(fw[name].dtype, dt);
        close(`${what} ${name}`, fw[name], ref[name].data, tol);
      }
      const saved = [fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights] as const;
      using g = lltmBackward(gradH, gradCell, ...saved, weights);
      const rg = referenceBackward(gradH, gradCell, ...saved, weights);
      for (const name of ["dOldH", "dInput", "dWeights", "dBias", "dOldCell"] as const) close(`${what} ${name}`, g[name], rg[name].data, tol);
      // Into given gradients holding ones: the half values read, each sum rounded once.
      using dWeights = Tensor.ones([3 * S, K], { dtype: dt, device: "cuda" });
      using dBias = Tensor.ones([3 * S], { dtype: dt, device: "cuda" });
      using acc = lltmBackwardAccumulate(gradH, gradCell, ...saved, weights, dWeights, dBias);
      close(`${what} dOldH (accumulating)`, acc.dOldH, rg.dOldH.data, tol);
      close(`${what} dWeights accumulated`, dWeights, rg.dWeights.data.map((v) => v + 1), tol);
      close(`${what} dBias accumulated`, dBias, rg.dBias.data.map((v) => v + 1), tol);
    }
  }, { skip });

  test(`CUDA step in ${dt} takes no float32 copies: the device memory it takes beyond its outputs is far below its weights' bytes`, () => {
    // Wide weights and a short batch: a float32 copy of the weights would be 24 MiB, the step's own scratch is 48 KiB.
    const B = 4, F = 1000, S = 1000, K = S + F;
    using input = randn([B, F], 1, dt);
    using weights = randn([3 * S, K], 2, dt, 1 / Math.sqrt(K));
    using bias = randn([3 * S], 3, dt);
    using oldH = randn([B, S], 4, dt);
    using oldCell = randn([B, S], 5, dt);
    using gradH = randn([B, S], 6, dt);
    using gradCell = randn([B, S], 7, dt);
    const limit = bytes([weights]) / 2;
    cuda.synchronize();
    let before = cuda.memoryAllocated();
    cuda.resetPeakMemoryStats();
    using fw = lltmForward(input, weights, bias, oldH, oldCell);
    cuda.synchronize();
    const outputs = [fw.newH, fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights];
    const forwardExtra = cuda.maxMemoryAllocated() - before - bytes(outputs);
    assert(forwardExtra < limit, `${dt} forward took ${forwardExtra} bytes beyond its outputs (limit ${limit})`);
    before = cuda.memoryAllocated();
    cuda.resetPeakMemoryStats();
    using g = lltmBackward(gradH, gradCell, fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights, weights);
    cuda.synchronize();
    const backwardExtra = cuda.maxMemoryAllocated() - before - bytes([g.dOldH, g.dInput, g.dWeights, g.dBias, g.dOldCell]);
    assert(backwardExtra < limit, `${dt} backward took ${backwardExtra} bytes beyond its outputs (limit ${limit})`);
  }, { skip });
}
