/**
 * A float32 sequence's forward and backward at each precision named, against
 * the float64 reference, printed as JSON (for matmul_precision.test.ts, which
 * runs it with LLTM_CUDA_KERNELS=fused,persistent: the own product kernel
 * computes the products around the recurrence exactly at every precision, so
 * what "high" and "medium" round is the recurrence's own product). Twice at
 * each precision but "highest", to show the tensor cores' sums are the same
 * each run. With zero-inputs the inputs are zeros, so that the products
 * over all steps (the input projection, and d_inputs) are exact whatever
 * they round.
 *
 * usage: tensor_core_child.ts T B F S [zero-inputs] PRECISION...
 */
import { type Float32MatmulPrecision, lltmSequenceBackward, lltmSequenceForward, Tensor } from "../ts/index.ts";
import { makeInput, referenceError, withPrecision } from "./helpers.ts";
import { makeSequence, makeWeights } from "./sequence_helpers.ts";
import { referenceSequence } from "./sequence_reference.ts";

const argv = process.argv.slice(2);
const [T, B, F, S] = argv.slice(0, 4).map(Number) as [number, number, number, number];
const zeroInputs = argv[4] === "zero-inputs";
const precisions = argv.slice(zeroInputs ? 5 : 4) as Float32MatmulPrecision[];
using inputs = zeroInputs
  ? Tensor.zeros([T, B, F], { dtype: "float32", device: "cuda" })
  : makeSequence([T, B, F], "contiguous", 21, "float32", "cuda");
using weights = makeWeights(S, F, "contiguous", 22, "float32", "cuda");
using bias = makeInput([3 * S], "contiguous", 23, "float32", "cuda");
using h0 = makeInput([B, S], "contiguous", 24, "float32", "cuda");
using c0 = makeInput([B, S], "contiguous", 25, "float32", "cuda");
using gradOutputs = makeSequence([T, B, S], "contiguous", 26, "float32", "cuda");
const expected = referenceSequence(inputs, weights, bias, h0, c0, gradOutputs);
const values = (t: Tensor) => Array.from(t.toTypedArray());

function run(): { outputs: number[]; dH0: number[]; dWeights: number[] } {
  using fw = lltmSequenceForward(inputs, weights, bias, h0, c0);
  using bw = lltmSequenceBackward(gradOutputs, undefined, undefined, fw.reserve!, inputs, weights, h0);
  fw.reserve!.dispose();
  return { outputs: values(fw.outputs), dH0: values(bw.dH0), dWeights: values(bw.dWeights) };
}

const errors = (r: ReturnType<typeof run>) => ({
  outputs: referenceError(r.outputs, expected.outputs),
  dH0: referenceError(r.dH0, expected.dH0),
  dWeights: referenceError(r.dWeights, expected.dWeights),
});
const report: Record<string, { errors: ReturnType<typeof errors>; same: boolean }> = {};
for (const precision of precisions) {
  const first = withPrecision(precision, run);
  const same = precision === "highest" || JSON.stringify(first) === JSON.stringify(withPrecision(precision, run));
  report[precision] = { errors: errors(first), same };
}
console.log(JSON.stringify(report));
