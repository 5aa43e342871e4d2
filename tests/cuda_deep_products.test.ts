/**
 * linearBackward on CUDA over thousands of rows into few results, as the
 * weights' gradients of a language model's head and of the sequence backward
 * are (a sum over every T * B row): operand layouts cuBLAS reads in place
 * and one it reads through a copy, into fresh and into given gradients,
 * against the float64 reference.
 */
import { type DType, linearBackward, Tensor } from "../ts/index.ts";
import { assert, cudaSkipReason, test } from "./harness.ts";
import { type Layout, makeInput, referenceError, tolerance } from "./helpers.ts";
import { referenceLinearBackward } from "./linear_reference.ts";

const skip = cudaSkipReason();

// [rows N, in K, out M]
const shapes: readonly [number, number, number][] = [[6400, 64, 32], [4096, 48, 65], [4104, 40, 24], [2048, 256, 512]];

for (const dt of ["float32", "float64"] as const satisfies readonly DType[]) {
  test(`CUDA linearBackward over a long depth (${dt}) matches the float64 reference`, () => {
    let seed = 1;
    for (const [N, K, M] of shapes) {
      for (const lx of ["contiguous", "transposed", "strided"] as const satisfies readonly Layout[]) {
        using x = makeInput([N, K], lx, seed++, dt, "cuda");
        using w = makeInput([M, K], "contiguous", seed++, dt, "cuda", 1 / Math.sqrt(K));
        using gy = makeInput([N, M], lx === "transposed" ? "contiguous" : "transposed", seed++, dt, "cuda");
        const ref = referenceLinearBackward(gy, x, w);
        using g = linearBackward(gy, x, w, { needX: false });
        const e = referenceError(g.dWeight!.toTypedArray(), ref.dWeight);
        assert(e <= tolerance[dt], `${dt} dWeight ${N}x${K}x${M} (${lx} x): ${e}`);
        // Added into given gradients.
        using dW = Tensor.full([M, K], 0.5, { dtype: dt, device: "cuda" });
        using acc = linearBackward(gy, x, w, { dWeight: dW, needX: false, needBias: false });
        const ea = referenceError(dW.toTypedArray(), ref.dWeight.map((v) => v + 0.5));
        assert(ea <= tolerance[dt], `${dt} dWeight added to, ${N}x${K}x${M} (${lx} x): ${ea}`);
      }
    }
  }, { skip });
}
