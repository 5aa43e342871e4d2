/**
 * linear and its backward on CUDA in bfloat16 and float16 at sizes where
 * the products run on tensor cores (cuBLAS's GEMMEX with float32
 * accumulation), or the own kernel under LLTM_CUDA_KERNELS=fused: the
 * tensors are used as they are, not staged through float32, and the results
 * match the float64 reference on the same rounded inputs. Accumulating into
 * given gradients (as autograd's .grad) reads the half values and rounds the
 * sum once.
 *
 * Tolerances (tests/helpers.ts `tolerance`, as tests/half.property.test.ts
 * states them): inputs exact in the half type, products summed in float32
 * (K = 512 terms: relative error about 512 * 2^-24, far below the output's
 * rounding), each output rounded once to the half type: at most the unit
 * roundoff u relative (bfloat16 2^-8, float16 2^-11), within 2.5u and 4u.
 */
import { type DType, linear, linearBackward, Tensor } from "../ts/index.ts";
import { runChild, testFile } from "./child.ts";
import { assert, assertEquals, cudaSkipReason, test } from "./harness.ts";
import { assertClose as close, randnScaled, tolerance } from "./helpers.ts";
import { referenceLinear, referenceLinearBackward } from "./linear_reference.ts";

const skip = cudaSkipReason();

const randn = (shape: number[], seed: number, dtype: DType, scale = 1) => randnScaled(shape, seed, dtype, scale, "cuda");

for (const dt of ["bfloat16", "float16"] as const) {
  test(`CUDA linear and its backward in ${dt} at tensor-core sizes match the float64 reference`, () => {
    const N = 256, K = 512, M = 384, tol = tolerance[dt];
    using x = randn([N, K], 1, dt);
    using w = randn([M, K], 2, dt, 1 / Math.sqrt(K));
    using b = randn([M], 3, dt);
    using y = linear(x, w, b);
    assertEquals(y.dtype, dt);
    close(`${dt} y`, y, referenceLinear(x, w, b), tol);
    // A transposed weight: the product reads it in place (column-major), no copy.
    using wt = randn([K, M], 4, dt, 1 / Math.sqrt(K));
    using yt = linear(x, wt.transpose(0, 1));
    close(`${dt} y with a transposed weight`, yt, referenceLinear(x, wt.transpose(0, 1)), tol);

    using gy = randn([N, M], 5, dt);
    const ref = referenceLinearBackward(gy, x, w);
    using g = linearBackward(gy, x, w);
    close(`${dt} dX`, g.dX!, ref.dX, tol);
    close(`${dt} dWeight`, g.dWeight!, ref.dWeight, tol);
    close(`${dt} dBias`, g.dBias!, ref.dBias, tol);
    // Into given gradients holding ones: the half values read, the sums rounded once.
    using dW = Tensor.ones([M, K], { dtype: dt, device: "cuda" });
    using dB = Tensor.ones([M], { dtype: dt, device: "cuda" });
    using acc = linearBackward(gy, x, w, { dWeight: dW, dBias: dB, needX: false });
    close(`${dt} dWeight accumulated`, dW, ref.dWeight.map((v) => v + 1), tol);
    close(`${dt} dBias accumulated`, dB, ref.dBias.map((v) => v + 1), tol);
  }, { skip });
}

// The library's own product kernels in a process of their own (LLTM_CUDA_KERNELS is read once): the tensor-core
// kernel at every size but the smallest, over odd sizes and layouts (tests/own_gemm_child.ts).
test("CUDA linear and its backward in the half types on the library's own kernels (LLTM_CUDA_KERNELS=fused) match the float64 reference", () => {
  const r = runChild(testFile("own_gemm_child.ts"), [], { env: { LLTM_CUDA_KERNELS: "fused" }, timeoutMs: 300_000 });
  assert(r.status === 0, `own_gemm_child.ts failed:\n${r.stdout}${r.stderr}`);
}, { skip });
