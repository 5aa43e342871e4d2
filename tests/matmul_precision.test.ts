/**
 * setFloat32MatmulPrecision (torch.set_float32_matmul_precision): the
 * setting itself, the refusal of other names, exact products on the CPU at
 * every setting, and on CUDA with cuBLAS, TF32 products within TF32's
 * rounding where "high" allows them and exact ones again under "highest"
 * (the sequence engine's cached graphs are keyed by the precision), and
 * bfloat16 products under "medium" on the graph path, both passes (its steps'
 * products and those over all steps: the projection, d_inputs, d_weights);
 * a bfloat16 (float16) sequence, staged through float32 on CUDA, computes
 * its products as at "medium" ("high") whatever the setting; the persistent
 * recurrence's product on the tensor cores under "high".
 */
import {
  backendInfo, float32MatmulPrecisions, getFloat32MatmulPrecision, linear, lltmSequenceBackward, lltmSequenceForward,
  setFloat32MatmulPrecision, Tensor,
} from "../ts/index.ts";
import { headerConstants as h, Status } from "../ts/native/constants.ts";
import { native } from "../ts/native/library.ts";
import { runChild, testFile } from "./child.ts";
import { assert, assertEquals, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";
import { makeInput, referenceError, tolerance, withPrecision } from "./helpers.ts";
import { referenceLinear } from "./linear_reference.ts";
import { makeSequence, makeWeights } from "./sequence_helpers.ts";
import { referenceSequence } from "./sequence_reference.ts";

// TF32 keeps 10 of float32's 23 mantissa bits: each input is off by at most
// 2^-11 relative, a product by twice that; over a sum of products of random
// signs the norm-wise error stays near that bound, under 2e-3. bfloat16
// ("medium") keeps 7 bits: 2^-8 per input, under 1e-2.
const tf32Tolerance = 2e-3;
const bf16Tolerance = 1e-2;


test("setFloat32MatmulPrecision sets what getFloat32MatmulPrecision reads; highest is the default", () => {
  assertEquals(getFloat32MatmulPrecision(), "highest");
  for (const p of float32MatmulPrecisions) withPrecision(p, () => assertEquals(getFloat32MatmulPrecision(), p));
  assertEquals(getFloat32MatmulPrecision(), "highest");
});

test("setFloat32MatmulPrecision refuses another name by its argument, changing nothing", () => {
  for (const bad of ["low", "HIGH", "", 1, undefined]) {
    assertThrowsLLTM(
      () => setFloat32MatmulPrecision(bad as unknown as "high"),
      "INVALID_ARGUMENT",
      /setFloat32MatmulPrecision: 'precision' must be "highest", "high" or "medium", got/,
    );
    assertEquals(getFloat32MatmulPrecision(), "highest");
  }
});

test("lltm_set_float32_matmul_precision refuses a value outside LLTM_MATMUL_PRECISION_*, naming the argument", () => {
  const lib = native();
  for (const bad of [-1, 3, 1000]) {
    assertEquals(lib.lltm_set_float32_matmul_precision(bad), Status.INVALID_ARGUMENT, `precision ${bad}`);
    assert(/lltm_set_float32_matmul_precision: 'precision' must be 0 \(highest\), 1 \(high\) or 2 \(medium\), got/.test(lib.lltm_last_error()), lib.lltm_last_error());
    assertEquals(lib.lltm_float32_matmul_precision(), h.LLTM_MATMUL_PRECISION_HIGHEST);
  }
  assertEquals(lib.lltm_set_float32_matmul_precision(h.LLTM_MATMUL_PRECISION_MEDIUM), Status.OK);
  assertEquals(getFloat32MatmulPrecision(), "medium");
  assertEquals(lib.lltm_set_float32_matmul_precision(h.LLTM_MATMUL_PRECISION_HIGHEST), Status.OK);
});

test("CPU products are exact float32 at every precision", () => {
  using x = makeInput([33, 70], "contiguous", 1, "float32");
  using w = makeInput([21, 70], "transposed", 2, "float32", "cpu", 1 / Math.sqrt(70));
  using exact = linear(x, w);
  for (const p of float32MatmulPrecisions) {
    withPrecision(p, () => {
      using y = linear(x, w);
      assertEquals(Array.from(y.toTypedArray()), Array.from(exact.toTypedArray()), `CPU linear under ${p}`);
    });
  }
});

const skip = cudaSkipReason();

/**
 * Whether the CUDA products run on cuBLAS: not where the backend has none,
 * nor where LLTM_CUDA_KERNELS forces the own kernel (fused, fused-int64),
 * which computes exactly at every precision.
 */
function cublasProducts(): boolean {
  const forced = `,${process.env.LLTM_CUDA_KERNELS ?? ""},`;
  return backendInfo().cudaBlas === "cublas" && !forced.includes(",fused,") && !forced.includes(",fused-int64,");
}

test("CUDA: float32 linear takes TF32 (or bfloat16) products where allowed, exact ones under highest", () => {
  const cublas = cublasProducts();
  const N = 256, K = 512, M = 256;
  using x = makeInput([N, K], "contiguous", 3, "float32", "cuda");
  using w = makeInput([M, K], "contiguous", 4, "float32", "cuda", 1 / Math.sqrt(K));
  const expected = referenceLinear(x, w);
  const error = () => {
    using y = linear(x, w);
    return referenceError(y.toTypedArray(), expected);
  };
  const highest = error();
  assert(highest <= tolerance.float32, `highest: ${highest}`);
  const high = withPrecision("high", error);
  const medium = withPrecision("medium", error);
  assert(high <= tf32Tolerance, `high: ${high}`);
  assert(medium <= bf16Tolerance, `medium: ${medium}`);
  // cuBLAS rounds to TF32 when allowed; the own kernel computes exactly at every setting.
  if (cublas) assert(high > 10 * highest, `high (${high}) rounds more than highest (${highest}): TF32 is in use`);
  else assert(high <= tolerance.float32, `the own kernel is exact under high: ${high}`);
  const again = error();
  assert(again <= tolerance.float32, `highest again: ${again}`);
}, { skip });

// A float32 sequence on CUDA at S = 640: past what the persistent kernels keep on chip, so the graph path runs.
const T = 4, B = 8, F = 16, S = 640;
function graphSequence(): { inputs: Tensor; weights: Tensor; bias: Tensor; h0: Tensor; c0: Tensor } & Disposable {
  const inputs = makeSequence([T, B, F], "contiguous", 5, "float32", "cuda");
  const weights = makeWeights(S, F, "contiguous", 6, "float32", "cuda");
  const bias = makeInput([3 * S], "contiguous", 7, "float32", "cuda");
  const h0 = makeInput([B, S], "contiguous", 8, "float32", "cuda");
  const c0 = makeInput([B, S], "contiguous", 9, "float32", "cuda");
  return { inputs, weights, bias, h0, c0, [Symbol.dispose]: () => [inputs, weights, bias, h0, c0].forEach((t) => t.dispose()) };
}

test("CUDA: the sequence engine's products follow the precision, its cached graphs with it", () => {
  const cublas = cublasProducts();
  using sequence = graphSequence();
  const { inputs, weights, bias, h0, c0 } = sequence;
  const expected = referenceSequence(inputs, weights, bias, h0, c0).outputs;
  const error = () => {
    using fw = lltmSequenceForward(inputs, weights, bias, h0, c0);
    return referenceError(fw.outputs.toTypedArray(), expected);
  };
  const highest = error();
  assert(highest <= tolerance.float32, `highest: ${highest}`);
  const high = withPrecision("high", error);
  assert(high <= tf32Tolerance, `high: ${high}`);
  if (cublas) assert(high > 10 * highest, `high (${high}) rounds more than highest (${highest}): TF32 is in use`);
  else assert(high <= tolerance.float32, `the own kernel is exact under high: ${high}`);
  // "medium": every step's product of bfloat16 h and W_h (float32 sums), with cuBLAS or the own kernel alike.
  const medium = withPrecision("medium", error);
  assert(medium <= bf16Tolerance, `medium: ${medium}`);
  assert(medium > 10 * highest, `medium (${medium}) rounds more than highest (${highest}): bfloat16 products are in use`);
  const again = error();
  assert(again <= tolerance.float32, `highest again, from the graph captured for it: ${again}`);
}, { skip });

test("CUDA: the sequence backward on the graph path takes bfloat16 products under medium, within bfloat16's rounding", () => {
  using sequence = graphSequence();
  const { inputs, weights, bias, h0, c0 } = sequence;
  using gradOutputs = makeSequence([T, B, S], "contiguous", 10, "float32", "cuda");
  const gradients = () => {
    using fw = lltmSequenceForward(inputs, weights, bias, h0, c0);
    using bw = lltmSequenceBackward(gradOutputs, undefined, undefined, fw.reserve!, inputs, weights, h0);
    fw.reserve!.dispose();
    return [bw.dInputs, bw.dWeights, bw.dBias, bw.dH0, bw.dC0].map((t) => t.toTypedArray());
  };
  const exact = gradients(), medium = withPrecision("medium", gradients);
  ["dInputs", "dWeights", "dBias", "dH0", "dC0"].forEach((name, i) => {
    const err = referenceError(medium[i]!, exact[i]!);
    assert(err <= bf16Tolerance, `${name} under medium against highest: ${err}`);
    assert(err > 0, `${name} under medium equals highest's: the bfloat16 products did not run`);
  });
}, { skip });

test("CUDA: a bfloat16 (float16) sequence's products round as at medium (high) under every setting", () => {
  // The graph path's per-step products round their operands to bfloat16 under medium: a call whose own type is
  // bfloat16 gives the same bits under highest as under medium. cuBLAS and the own kernel are deterministic.
  for (const [dtype, floor] of [["bfloat16", "medium"], ["float16", "high"]] as const) {
    using inputs = makeSequence([T, B, F], "contiguous", 5, dtype, "cuda");
    using weights = makeWeights(S, F, "contiguous", 6, dtype, "cuda");
    using bias = makeInput([3 * S], "contiguous", 7, dtype, "cuda");
    using h0 = makeInput([B, S], "contiguous", 8, dtype, "cuda");
    using c0 = makeInput([B, S], "contiguous", 9, dtype, "cuda");
    using gradOutputs = makeSequence([T, B, S], "contiguous", 10, dtype, "cuda");
    const run = () => {
      using fw = lltmSequenceForward(inputs, weights, bias, h0, c0);
      using bw = lltmSequenceBackward(gradOutputs, undefined, undefined, fw.reserve!, inputs, weights, h0);
      return [fw.outputs, bw.dInputs, bw.dWeights, bw.dH0].map((t) => Array.from(t.toTypedArray()));
    };
    const atFloor = withPrecision(floor, run);
    const results = [run(), withPrecision("high", run)];
    for (const [k, got] of results.entries()) {
      for (const [i, values] of got.entries()) assertEquals(values, atFloor[i]!, `${dtype} result ${i}, run ${k}, as under ${floor}`);
    }
  }
}, { skip });

// The child's report: each precision's errors against the float64 reference, and whether two runs gave the same bits.
type TensorCoreReport = Record<string, { errors: Record<string, number>; same: boolean }>;

function tensorCoreRun(size: [number, number, number, number], precisions: string[]): TensorCoreReport {
  // The kernels in force for the process need a process of its own.
  const r = runChild(testFile("tensor_core_child.ts"), [...size.map(String), ...precisions], {
    env: { LLTM_CUDA_KERNELS: "fused,persistent" },
  });
  assert(r.status === 0, `tensor_core_child.ts failed:\n${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as TensorCoreReport;
}

const sequenceResults = ["outputs", "dH0", "dWeights"];

test("CUDA: the persistent recurrence takes the tensor cores' TF32 products under high, bfloat16 ones under medium, the same sums each run", () => {
  // With the own product kernel (exact at every precision) around the recurrence, only the recurrent product
  // rounds: at this size (7 groups of 16 states, the last partial, times 2 groups of 16 rows, the last partial:
  // 14 blocks) it runs on the tensor cores of an sm_80 or later GPU of 14 or more multiprocessors. bfloat16's
  // 8-bit significands round 8 times coarser than TF32's 11.
  const report = tensorCoreRun([6, 20, 24, 100], ["highest", "high", "medium"]);
  const [highest, high, medium] = [report.highest!, report.high!, report.medium!];
  for (const name of sequenceResults) {
    const [exact, tf32, bf16] = [highest.errors[name]!, high.errors[name]!, medium.errors[name]!];
    assert(exact <= tolerance.float32, `${name} under highest: ${exact}`);
    assert(tf32 <= tf32Tolerance, `${name} under high: ${tf32}`);
    assert(tf32 > 10 * exact, `${name} under high (${tf32}) rounds more than highest (${exact}): TF32 is in use`);
    assert(bf16 <= bf16Tolerance, `${name} under medium: ${bf16}`);
    assert(bf16 > 3 * tf32, `${name} under medium (${bf16}) rounds more than high (${tf32}): bfloat16 is in use`);
  }
  assert(high.same && medium.same, "two runs under high, and two under medium, give the same results");
}, { skip });

test("CUDA: the persistent recurrence's tensor-core kernels take two tiles of rows a block where one would need more blocks than the GPU holds", () => {
  // S = 501: 32 groups of 16 states (the last of 5), odd, so h's rows take no 16-byte loads; B = 70 in 16-row
  // tiles would take 160 blocks, in 32-row ones 96 (the last tile of 6 rows). With zero inputs only the
  // recurrent product can round the outputs and dH0 (the kernels that run where the tensor-core ones do not
  // fit compute it exactly): that they round as TF32 and bfloat16 do shows the tensor cores ran it.
  const report = tensorCoreRun([3, 70, 6, 501], ["zero-inputs", "highest", "high", "medium"]);
  const [highest, high, medium] = [report.highest!, report.high!, report.medium!];
  for (const name of sequenceResults) {
    const [exact, tf32, bf16] = [highest.errors[name]!, high.errors[name]!, medium.errors[name]!];
    assert(exact <= tolerance.float32, `${name} under highest: ${exact}`);
    assert(tf32 <= tf32Tolerance, `${name} under high: ${tf32}`);
    assert(bf16 <= bf16Tolerance, `${name} under medium: ${bf16}`);
    if (name !== "dWeights") {
      assert(tf32 > 10 * exact, `${name} under high (${tf32}) rounds more than highest (${exact})`);
      assert(bf16 > 3 * tf32, `${name} under medium (${bf16}) rounds more than high (${tf32})`);
    }
  }
  assert(high.same && medium.same, "two runs under high, and two under medium, give the same results");
}, { skip });
