/**
 * linear and its backward on CUDA in bfloat16 and float16 through the
 * library's own product kernels (run by cuda_linear_half.test.ts with
 * LLTM_CUDA_KERNELS=fused: the tensor-core kernel, and the scalar one below
 * its sizes), over odd sizes, a depth that ends mid-slab, and operands laid
 * out by rows, by columns and with gaps, fresh and added into given
 * gradients, against the float64 reference on the same rounded inputs.
 * Prints one line per failure and exits 1 if any.
 */
import process from "node:process";

import { type DType, linear, linearBackward, Tensor } from "../ts/index.ts";
import { type Layout, makeInput, referenceError, tolerance } from "./helpers.ts";
import { referenceLinear, referenceLinearBackward } from "./linear_reference.ts";

// [rows N, in K, out M]: two whole 128 x 128 tiles and more, odd sizes, a depth of 17 (one slab, partly
// filled), a depth of 72 (a whole number of 16-byte chunks ending mid-slab, the asynchronous copies' zero fill)
// over partial tiles, and a product too small for the tensor cores (the scalar kernel).
const shapes: readonly [number, number, number][] = [[256, 512, 384], [37, 45, 29], [130, 17, 200], [200, 72, 136], [9, 64, 5]];
const failures: string[] = [];
const check = (what: string, actual: Tensor, expected: ArrayLike<number>, tol: number) => {
  const e = referenceError(actual.toTypedArray(), expected);
  if (!(e <= tol)) failures.push(`${what}: ${e} > ${tol}`);
};
let seed = 1;
for (const dt of ["bfloat16", "float16"] as const satisfies readonly DType[]) {
  const tol = tolerance[dt];
  for (const [N, K, M] of shapes) {
    for (const [lx, lw] of [["contiguous", "contiguous"], ["transposed", "transposed"], ["strided", "contiguous"]] as const satisfies readonly [Layout, Layout][]) {
      const at = `${dt} ${N}x${K}x${M} x ${lx} w ${lw}`;
      using x = makeInput([N, K], lx, seed++, dt, "cuda");
      using w = makeInput([M, K], lw, seed++, dt, "cuda", 1 / Math.sqrt(K));
      using b = makeInput([M], "contiguous", seed++, dt, "cuda");
      using y = linear(x, w, b);
      check(`${at}: y`, y, referenceLinear(x, w, b), tol);
      using gy = makeInput([N, M], lx === "transposed" ? "contiguous" : "transposed", seed++, dt, "cuda");
      const ref = referenceLinearBackward(gy, x, w);
      using g = linearBackward(gy, x, w);
      check(`${at}: dX`, g.dX!, ref.dX, tol);
      check(`${at}: dWeight`, g.dWeight!, ref.dWeight, tol);
      using dW = Tensor.ones([M, K], { dtype: dt, device: "cuda" });
      using acc = linearBackward(gy, x, w, { dWeight: dW, needX: false, needBias: false });
      check(`${at}: dWeight added to ones`, dW, ref.dWeight.map((v) => v + 1), tol);
    }
  }
}
for (const f of failures) console.log(f);
console.log(`${failures.length} failures`);
process.exit(failures.length === 0 ? 0 : 1);
