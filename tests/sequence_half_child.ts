/**
 * CUDA sequences in the half type argv[2] names against the float64 reference on the same rounded inputs, with
 * tests/sequence_bf16.test.ts's bounds, in views that take the engine's copies (batch-major inputs, transposed
 * weights), with lengths, and accumulating into the parameter gradients; for cuda.test.ts, which runs it under
 * each LLTM_CUDA_KERNELS path (a bfloat16 call on the graph path keeps its inputs and weights for its products,
 * every other call computes on float32 copies). Prints one line a case; exits 1 on a mismatch.
 */
import process from "node:process";

import { type DType, lltmSequenceBackward, lltmSequenceBackwardAccumulate, lltmSequenceForward, Tensor } from "../ts/index.ts";
import { type Layout, makeInput } from "./helpers.ts";
import { makeSequence, makeWeights, mismatch, type SequenceLayout, sequenceTolerance } from "./sequence_helpers.ts";
import { referenceSequence } from "./sequence_reference.ts";

const dt = (process.argv[2] ?? "bfloat16") as DType;
const cases: { T: number; B: number; F: number; S: number; inputs: SequenceLayout; weights: Layout; lengths: boolean; accumulate: boolean }[] = [
  { T: 5, B: 3, F: 7, S: 37, inputs: "contiguous", weights: "contiguous", lengths: false, accumulate: false },
  { T: 3, B: 9, F: 5, S: 70, inputs: "batchMajor", weights: "transposed", lengths: true, accumulate: true },
  { T: 6, B: 1, F: 16, S: 24, inputs: "strided", weights: "strided", lengths: false, accumulate: true },
];
let failed = false;
for (const [k, c] of cases.entries()) {
  const { T, B, F, S } = c;
  const seed = 100 * k;
  const on = (layout: Layout, shape: number[], s: number) => makeInput(shape, layout, s, dt, "cuda");
  using inputs = makeSequence([T, B, F], c.inputs, seed, dt, "cuda");
  using weights = makeWeights(S, F, c.weights, seed + 1, dt, "cuda");
  using bias = on("contiguous", [3 * S], seed + 2);
  using h0 = on("contiguous", [B, S], seed + 3);
  using c0 = on("contiguous", [B, S], seed + 4);
  using gradOutputs = makeSequence([T, B, S], "contiguous", seed + 5, dt, "cuda");
  using gradLastCell = on("contiguous", [B, S], seed + 6);
  const lengths = c.lengths ? Array.from({ length: B }, (_, b) => 1 + (b * 7) % T) : undefined;
  using len = lengths && Tensor.fromTypedArray(Int32Array.from(lengths), [B], { dtype: "int32", device: "cuda" });
  const options = len ? { lengths: len } : {};
  const ref = referenceSequence(inputs, weights, bias, h0, c0, gradOutputs, undefined, gradLastCell, lengths);
  using fw = lltmSequenceForward(inputs, weights, bias, h0, c0, options);
  const problems: string[] = [];
  const tol = sequenceTolerance(dt, T);
  for (const name of ["outputs", "lastH", "lastCell"] as const) {
    const why = mismatch(fw[name].toTypedArray(), ref[name], tol, { values: ref.forwardMagnitudes[name], tol });
    if (why !== undefined) problems.push(`${name}: ${why}`);
  }
  // Accumulating into gradients that hold the reference's once: the result is twice it.
  using dWeights = Tensor.fromTypedArray(Float32Array.from(ref.dWeights), [3 * S, S + F], { dtype: dt, device: "cuda" });
  using dBias = Tensor.fromTypedArray(Float32Array.from(ref.dBias), [3 * S], { dtype: dt, device: "cuda" });
  using accumulated = c.accumulate
    ? lltmSequenceBackwardAccumulate(gradOutputs, undefined, gradLastCell, fw.reserve!, inputs, weights, h0, dWeights, dBias, options)
    : undefined;
  using full = c.accumulate ? undefined : lltmSequenceBackward(gradOutputs, undefined, gradLastCell, fw.reserve!, inputs, weights, h0, options);
  const bw = (accumulated ?? full)!;
  const times = c.accumulate ? 2 : 1;
  const grads: [string, Tensor, number[] | Float64Array, ArrayLike<number>][] = [
    ["dInputs", bw.dInputs, ref.dInputs, ref.magnitudes.dInputs], ["dH0", bw.dH0, ref.dH0, ref.magnitudes.dH0],
    ["dC0", bw.dC0, ref.dC0, ref.magnitudes.dC0],
    ["dWeights", full?.dWeights ?? dWeights, ref.dWeights.map((v) => times * v), ref.magnitudes.dWeights.map((v) => times * v)],
    ["dBias", full?.dBias ?? dBias, ref.dBias.map((v) => times * v), ref.magnitudes.dBias.map((v) => times * v)],
  ];
  for (const [name, t, expected, magnitudes] of grads) {
    const why = mismatch(t.toTypedArray(), expected, 2 * tol, { values: magnitudes, tol: 2 * tol });
    if (why !== undefined) problems.push(`${name}: ${why}`);
  }
  failed ||= problems.length > 0;
  console.log(`${dt} T=${T} ${B}x${F}x${S} inputs ${c.inputs} weights ${c.weights}${c.lengths ? " lengths" : ""}${c.accumulate ? " accumulate" : ""}: ${problems.length === 0 ? "ok" : problems.join("; ")}`);
}
process.exit(failed ? 1 : 0);
