/**
 * linear and its backward on CUDA in bfloat16 and float16 through the
 * library's own product kernels (run by cuda_linear_half.test.ts with
 * LLTM_CUDA_KERNELS=fused: the tensor-core kernels, and the scalar one below
 * their sizes), over odd sizes, a depth that ends mid-slab, and operands laid
 * out by rows, by columns and with gaps, fresh and added into given
 * gradients, against the float64 reference on the same rounded inputs.
 * Prints one line per failure and exits 1 if any.
 *
 * Which tensor-core kernel a product runs follows from how each operand is
 * read (cuda/math/tensor_core_gemm.cu): 16 bytes along the depth (D), 16
 * bytes along the output side, i.e. transposed (S), or element by element.
 * y = x Wᵀ reads x by rows (D) or, transposed, by columns (S), and W the
 * other way round; dX = gy W and dW = gyᵀ x read W and x across their rows
 * (S where contiguous). Over the layouts below the asynchronous kernel gets
 * all four mixes DD, DS, SD and SS, at whole and partial tiles, SS at depths
 * 17 and 45 (no whole number of chunks, which only a depth-vector operand
 * needs), and the register-staged kernel the rest. Products that fill the
 * device for two waves of the large 128 x 256 tile take that tile instead:
 * the last two sections give it all four mixes, fresh and added into a
 * given gradient, checked element by element on a sample of the outputs.
 */
import process from "node:process";

import { type DType, linear, linearBackward, Tensor } from "../ts/index.ts";
import { type Layout, makeInput, referenceError, tolerance } from "./helpers.ts";
import { referenceLinear, referenceLinearBackward } from "./linear_reference.ts";

// [rows N, in K, out M]: two whole 128 x 128 tiles and more, odd sizes, a depth of 17 (one slab, partly
// filled), a depth of 72 (a whole number of 16-byte chunks ending mid-slab, the asynchronous copies' zero fill)
// over partial tiles, sides that are whole chunks around a depth of 17 (x and W transposed: both read along
// the side, y's depth in no whole chunks) and around an out size of 45 (dX = gy W reads gy and W along the side,
// 45 deep), and a product too small for the tensor cores (the scalar kernel).
const shapes: readonly [number, number, number][] = [
  [256, 512, 384], [37, 45, 29], [130, 17, 200], [200, 72, 136], [136, 17, 200], [136, 72, 45], [9, 64, 5],
];
// x and W each by rows and by columns (all four ways the asynchronous kernel reads a pair), and x with gaps.
const layoutPairs = [
  ["contiguous", "contiguous"], ["transposed", "transposed"], ["contiguous", "transposed"],
  ["transposed", "contiguous"], ["strided", "contiguous"],
] as const satisfies readonly [Layout, Layout][];
const failures: string[] = [];
const check = (what: string, actual: Tensor, expected: ArrayLike<number>, tol: number) => {
  const e = referenceError(actual.toTypedArray(), expected);
  if (!(e <= tol)) failures.push(`${what}: ${e} > ${tol}`);
};
let seed = 1;
for (const dt of ["bfloat16", "float16"] as const satisfies readonly DType[]) {
  const tol = tolerance[dt];
  for (const [N, K, M] of shapes) {
    for (const [lx, lw] of layoutPairs) {
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
// x the transpose of 37 of the 40 columns of a [64, 40] tensor: read along the side with a stride of whole
// chunks, but a chunk of its 37 sides (of y's A), or of its 37-deep depth (of dW's B), would cross the edge: the
// register-staged kernel.
for (const dt of ["bfloat16", "float16"] as const satisfies readonly DType[]) {
  const [N, K, M, tol] = [37, 64, 136, tolerance[dt]];
  using wide = makeInput([K, N + 3], "contiguous", seed++, dt, "cuda");
  using window = wide.narrow(1, 0, N);
  using x = window.transpose();
  using w = makeInput([M, K], "transposed", seed++, dt, "cuda", 1 / Math.sqrt(K));
  using y = linear(x, w);
  check(`${dt} ${N}x${K}x${M} x a window of a transposed tensor: y`, y, referenceLinear(x, w), tol);
  using gy = makeInput([N, M], "contiguous", seed++, dt, "cuda");
  using g = linearBackward(gy, x, w, { needX: false, needBias: false });
  check(`${dt} ${N}x${K}x${M} x a window of a transposed tensor: dWeight`, g.dWeight!,
    referenceLinearBackward(gy, x, w).dWeight, tol);
}
// Outputs of products that take the large tile, element by element: in a norm over millions of outputs a wrong
// 16 x 8 fragment would pass. Each sampled output within tol of its float64 sum `expected(row, col)` (relative,
// or absolute below 1): the float32 sum rounded once to the half type is within u of it. Rows a multiple of 13
// and columns of 3, and the last of each: any 16 rows and 8 columns hold sampled ones, so a fragment wrong at
// the same place of every tile shows in each, and the sampled rows and columns fall on every offset within a
// tile across the tiles.
const checkSampled = (what: string, actual: Tensor, expected: (row: number, col: number) => number, tol: number) => {
  const [rows, cols] = [actual.shape[0]!, actual.shape[1]!];
  const values = actual.toTypedArray();
  let bad = 0, first = "";
  for (let r = 0; r < rows; r++) {
    if (r % 13 !== 0 && r !== rows - 1) continue;
    for (let c = 0; c < cols; c++) {
      if (c % 3 !== 0 && c !== cols - 1) continue;
      const want = expected(r, c), got = values[r * cols + c]!;
      if (!(Math.abs(got - want) <= tol * Math.max(Math.abs(want), 1)) && bad++ === 0) first = `(${r}, ${c}) ${got} for ${want}`;
    }
  }
  if (bad > 0) failures.push(`${what}: ${bad} sampled outputs past ${tol}, first ${first}`);
};
// x and W (below: x and gy) each by rows and by columns, as the first four layout pairs: the large tile's four ways
// of reading a pair.
const readPairs = layoutPairs.slice(0, 4);
// y = x Wᵀ, [2056, 4360]: 17 x 18 = 306 large tiles, two waves up to 153 multiprocessors (132 on an H200), the
// last row and column of tiles one 16-byte chunk wide; 200 deep: 7 slabs, the last a quarter full, so that the
// 4 stages go round twice.
for (const dt of ["bfloat16", "float16"] as const satisfies readonly DType[]) {
  const [N, K, M, tol] = [2056, 200, 4360, tolerance[dt]];
  for (const [lx, lw] of readPairs) {
    using x = makeInput([N, K], lx, seed++, dt, "cuda");
    using w = makeInput([M, K], lw, seed++, dt, "cuda", 1 / Math.sqrt(K));
    const X = x.toTypedArray(), W = w.toTypedArray();
    using y = linear(x, w);
    checkSampled(`${dt} ${N}x${K}x${M} x ${lx} w ${lw}: y`, y, (n, m) => {
      let sum = 0;
      for (let k = 0; k < K; k++) sum += X[n * K + k]! * W[m * K + k]!;
      return sum;
    }, tol);
  }
}
// dW = gyᵀ x added to ones, [4360, 2056]: the large tile's sums added to C (beta 1), 40 deep (2 slabs, the last a
// quarter full).
for (const dt of ["bfloat16", "float16"] as const satisfies readonly DType[]) {
  const [N, K, M, tol] = [40, 2056, 4360, tolerance[dt]];
  for (const [lx, lg] of readPairs) {
    using x = makeInput([N, K], lx, seed++, dt, "cuda");
    using w = makeInput([M, K], "contiguous", seed++, dt, "cuda", 1 / Math.sqrt(K));
    using gy = makeInput([N, M], lg, seed++, dt, "cuda");
    const X = x.toTypedArray(), G = gy.toTypedArray();
    using dW = Tensor.ones([M, K], { dtype: dt, device: "cuda" });
    using acc = linearBackward(gy, x, w, { dWeight: dW, needX: false, needBias: false });
    checkSampled(`${dt} ${N}x${K}x${M} x ${lx} gy ${lg}: dWeight added to ones`, dW, (m, k) => {
      let sum = 1;
      for (let n = 0; n < N; n++) sum += G[n * M + m]! * X[n * K + k]!;
      return sum;
    }, tol);
  }
}
for (const f of failures) console.log(f);
console.log(`${failures.length} failures`);
process.exit(failures.length === 0 ? 0 : 1);
