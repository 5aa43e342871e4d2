/**
 * The sequence engine against the float64 reference (tests/sequence_reference.ts)
 * at fixed sizes and layouts, in both dtypes: what tests/cuda.test.ts runs
 * once per CUDA sequence path, each in a process of its own since the
 * kernels are chosen once per process (LLTM_CUDA_KERNELS=cluster, persistent,
 * cluster-mma, graph, fused for the own product kernel instead of cuBLAS, or a
 * combination).
 *
 * With --lengths every case runs with per-sample lengths (from 1 to T); with
 * --precision P its float32 products round as setFloat32MatmulPrecision(P)
 * allows, judged at the bfloat16-level tolerance that "medium" needs (and
 * float64, whose products never round, is left out).
 *
 * usage: bun scripts/check_sequence.ts [--cuda] [--lengths] [--precision P] [-v]
 */
import { type DType, lltmSequenceBackward, lltmSequenceBackwardAccumulate, lltmSequenceForward, relativeError, Tensor } from "../ts/index.ts";
import { distance, type Layout, makeInput, norm } from "../tests/helpers.ts";
import { makeSequence, makeWeights, type SequenceLayout, sequenceTolerance } from "../tests/sequence_helpers.ts";
import { type Gradient, referenceSequence } from "../tests/sequence_reference.ts";
import { parseArgs } from "./args.ts";
import { applyPrecisionArg } from "./precision_arg.ts";

const usage = "usage: bun scripts/check_sequence.ts [--cuda] [--lengths] [--precision P] [-v]";
const args = parseArgs(process.argv.slice(2), { values: ["--precision"], flags: ["--cuda", "--lengths", "-v"] }, usage);
const device = args.flags.has("--cuda") ? "cuda" : "cpu";
const verbose = args.flags.has("-v");
const withLengths = args.flags.has("--lengths");
// "high" rounds products' operands to TF32 (10 bits), "medium" to bfloat16 (8 bits): the tolerance of the latter.
const roundedProducts = applyPrecisionArg(args, usage) !== "highest";
const roundedTolerance = 3e-2;

interface Case {
  T: number;
  B: number;
  F: number;
  S: number;
  inputs: SequenceLayout;
  weights: Layout;
  accumulate: boolean;
  seed?: number;
  /** The dtypes the case runs in (default both): a case for a float32 kernel alone leaves float64 out. */
  dtypes?: DType[];
}

// Sizes of 1, odd and power-of-two sizes; S for each of the persistent
// kernels' block widths on a GPU of 132 multiprocessors (one state a block
// up to S = 132, two up to 264, four beyond) and past what they hold on chip
// (S = 600 runs on the graph path unless forced); for the cluster kernels,
// several clusters of rows with a partial last one (B = 37), groups of more
// than one task (S = 200), clusters of 16 blocks (S = 300 in float64) and a
// size they do not hold (S = 600); T past 64; inputs whose steps are not
// evenly spaced. B = 70 at S = 520: the persistent kernels' groups of rows
// a warp takes at once (64 rows a pass in the float32 forward, 32 in the
// rest) with single rows after them, in passes of whole groups and a last
// partial pass.
const cases: Case[] = [
  { T: 1, B: 1, F: 1, S: 1, inputs: "contiguous", weights: "contiguous", accumulate: false },
  { T: 5, B: 3, F: 7, S: 5, inputs: "batchMajor", weights: "transposed", accumulate: true },
  { T: 70, B: 4, F: 9, S: 13, inputs: "featureMajor", weights: "strided", accumulate: false },
  { T: 9, B: 37, F: 19, S: 45, inputs: "expanded", weights: "narrowed", accumulate: true },
  { T: 64, B: 16, F: 32, S: 128, inputs: "contiguous", weights: "contiguous", accumulate: false },
  // The same shape again with other tensors (other memory, values and
  // layouts): the graph path replays the graphs the case above captured,
  // which must read this call's tensors, not the last call's.
  { T: 64, B: 16, F: 32, S: 128, inputs: "batchMajor", weights: "transposed", accumulate: true, seed: 20 },
  { T: 64, B: 16, F: 32, S: 128, inputs: "contiguous", weights: "strided", accumulate: false, seed: 40 },
  { T: 6, B: 3, F: 5, S: 200, inputs: "batchMajor", weights: "contiguous", accumulate: true },
  { T: 4, B: 2, F: 4, S: 300, inputs: "contiguous", weights: "transposed", accumulate: false },
  { T: 3, B: 5, F: 6, S: 600, inputs: "strided", weights: "contiguous", accumulate: false },
  { T: 3, B: 70, F: 4, S: 520, inputs: "contiguous", weights: "contiguous", accumulate: true },
  // A smaller plan of the same kernel after a larger one, then the larger one
  // again from the plan cache: a kernel's shared memory limit must stay at its
  // cap, not drop to the last size's (float64 persistent: 130 KB, 86 KB, 130 KB).
  { T: 2, B: 2, F: 3, S: 600, inputs: "contiguous", weights: "contiguous", accumulate: false },
  { T: 2, B: 5, F: 3, S: 600, inputs: "contiguous", weights: "contiguous", accumulate: false },
  // The float32 forward and backward with the rows split between blocks (16 states of 16
  // rows a block, where that grid fills more than half of the GPU): partial
  // last groups of states and of rows (S = 500: 31 groups and 4 states; B =
  // 34: 2 groups and 2 rows, 96 blocks; S = 300, B = 70: 95 blocks).
  { T: 2, B: 34, F: 3, S: 500, inputs: "contiguous", weights: "contiguous", accumulate: true, dtypes: ["float32"] },
  { T: 2, B: 70, F: 5, S: 300, inputs: "batchMajor", weights: "transposed", accumulate: false, dtypes: ["float32"] },
  // The tensor-core kernels with two tiles of 16 rows a block, where one would take more blocks than 132 (S = 501:
  // 32 groups of states, the last of 5; B = 70: 3 groups of 32 rows, the last of 6).
  { T: 3, B: 70, F: 5, S: 501, inputs: "batchMajor", weights: "contiguous", accumulate: false, dtypes: ["float32"] },
  // The tensor-core clusters' forward (32 states a block, 16 rows a cluster): a second block of one state (S =
  // 33), both slots of staged h over many steps with a partial cluster of rows (T = 13, B = 20), and 16 blocks a
  // cluster (S = 512).
  { T: 5, B: 3, F: 4, S: 33, inputs: "contiguous", weights: "transposed", accumulate: false, dtypes: ["float32"] },
  { T: 13, B: 20, F: 6, S: 96, inputs: "featureMajor", weights: "strided", accumulate: true, dtypes: ["float32"] },
  { T: 4, B: 17, F: 3, S: 512, inputs: "contiguous", weights: "contiguous", accumulate: false, dtypes: ["float32"] },
];

/**
 * The relative error against the reference, or for a gradient whose terms
 * cancel, the error over a tenth of the terms' magnitude (as
 * tests/sequence.test.ts judges it): rounding scales with the terms.
 */
function error(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: number, magnitude?: ArrayLike<number>): number {
  const err = relativeError(actual, expected);
  if (err <= tol || magnitude === undefined) return err;
  const diff = distance(actual, expected);
  return Math.min(err, (diff / norm(magnitude)) * 10);
}

let failed = false;
// float64's products never round: under a rounding precision its run would repeat the exact one.
for (const dtype of (roundedProducts ? ["float32"] : ["float32", "float64"]) as DType[]) {
  for (const c of cases) {
    if (c.dtypes !== undefined && !c.dtypes.includes(dtype)) continue;
    const { T, B, F, S } = c;
    const seed = c.seed ?? 0;
    using inputs = makeSequence([T, B, F], c.inputs, seed + 1, dtype, device);
    using weights = makeWeights(S, F, c.weights, seed + 2, dtype, device);
    using bias = makeInput([3 * S], "contiguous", seed + 3, dtype, device);
    using h0 = makeInput([B, S], "transposed", seed + 4, dtype, device);
    using c0 = makeInput([B, S], "contiguous", seed + 5, dtype, device);
    using gradOutputs = makeSequence([T, B, S], "contiguous", seed + 6, dtype, device);
    using gradLastH = makeInput([B, S], "contiguous", seed + 7, dtype, device);
    // Lengths over the whole range, the full length among them.
    const lengthValues = withLengths ? Array.from({ length: B }, (_, b) => (b === 0 ? T : 1 + ((b * 7 + seed) % T))) : undefined;
    using lengths = lengthValues && Tensor.fromTypedArray(Int32Array.from(lengthValues), [B], { dtype: "int32", device });
    using fw = lltmSequenceForward(inputs, weights, bias, h0, c0, { lengths });
    using inference = lltmSequenceForward(inputs, weights, bias, h0, c0, { training: false, lengths });
    const ref = referenceSequence(inputs, weights, bias, h0, c0, gradOutputs, gradLastH, undefined, lengthValues);
    const tol = roundedProducts && dtype === "float32" ? Math.max(roundedTolerance, sequenceTolerance(dtype, T)) : sequenceTolerance(dtype, T);
    const errors: [string, number][] = [];
    const compare = (name: string, t: Tensor, expected: ArrayLike<number>, magnitude?: ArrayLike<number>) =>
      errors.push([name, error(t.toTypedArray(), expected, tol, magnitude)]);
    compare("outputs", fw.outputs, ref.outputs);
    compare("lastH", fw.lastH, ref.lastH);
    compare("lastCell", fw.lastCell, ref.lastCell);
    compare("inference outputs", inference.outputs, ref.outputs);
    compare("inference lastCell", inference.lastCell, ref.lastCell);
    if (c.accumulate) {
      // Accumulating adds the gradients to what the outputs hold: start them at ones.
      using dWeights = Tensor.ones([3 * S, S + F], { dtype, device });
      using dBias = Tensor.ones([3 * S], { dtype, device });
      using bw = lltmSequenceBackwardAccumulate(gradOutputs, gradLastH, undefined, fw.reserve!, inputs, weights, h0, dWeights, dBias, { lengths });
      for (const name of ["dInputs", "dH0", "dC0"] as const) compare(name, bw[name], ref[name], ref.magnitudes[name]);
      compare("dWeights (accumulated)", dWeights, ref.dWeights.map((v) => v + 1), ref.magnitudes.dWeights);
      compare("dBias (accumulated)", dBias, ref.dBias.map((v) => v + 1), ref.magnitudes.dBias);
    } else {
      using bw = lltmSequenceBackward(gradOutputs, gradLastH, undefined, fw.reserve!, inputs, weights, h0, { lengths });
      for (const name of ["dInputs", "dWeights", "dBias", "dH0", "dC0"] as Gradient[]) compare(name, bw[name], ref[name], ref.magnitudes[name]);
    }
    const worst = Math.max(...errors.map(([, e]) => e));
    const ok = worst <= tol;
    failed ||= !ok;
    console.log(`${dtype} T=${T} ${B}x${F}x${S} ${c.inputs}${withLengths ? " with lengths" : ""}: reference vs. ${device}: worst error ${worst.toExponential(2)} ... ${ok ? "Ok" : "FAILED"}`);
    if (verbose || !ok) for (const [name, e] of errors) console.log(`    ${name}: ${e.toExponential(2)}`);
  }
}
process.exit(failed ? 1 : 0);
