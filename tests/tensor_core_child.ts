/**
 * A float32 sequence's forward and backward under "highest" and under
 * "high", against the float64 reference, printed as JSON (for
 * matmul_precision.test.ts, which runs it with LLTM_CUDA_KERNELS=fused,persistent:
 * the own product kernel computes the products around the recurrence exactly
 * at every precision, so what "high" rounds is the recurrence's own product).
 * Twice under "high", to show the tensor cores' sums are the same each run.
 */
import { lltmSequenceBackward, lltmSequenceForward, type Tensor } from "../ts/index.ts";
import { makeInput, referenceError, withPrecision } from "./helpers.ts";
import { makeSequence, makeWeights } from "./sequence_helpers.ts";
import { referenceSequence } from "./sequence_reference.ts";

// 7 groups of 16 states (the last partial) times 2 groups of 16 rows (the last partial): 14 blocks.
const T = 6, B = 20, F = 24, S = 100;
using inputs = makeSequence([T, B, F], "contiguous", 21, "float32", "cuda");
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
const highest = run();
const high = withPrecision("high", run), again = withPrecision("high", run);
const same = JSON.stringify(high) === JSON.stringify(again);
console.log(JSON.stringify({ highest: errors(highest), high: errors(high), same }));
