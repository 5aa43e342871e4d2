/**
 * Run by tests/isa.test.ts in a child process with LLTM_CPU_KERNELS set: prints as JSON the CPU kernels this
 * process chose (or the library's refusal) and the worst relative error, per dtype, of the kernels that
 * check.ts does not reach (strided views through forward and backward, add_, SGD with momentum, Adam, the
 * sequence engine's forward) against float64 computations here, and of the sequence engine's backward against
 * central differences (float64). Fixed seeds, so that a run repeats exactly.
 */
import {
  Adam, backendInfo, type DType, LLTMLayer, lltmBackward, lltmForward, lltmSequenceForward, referenceBackward, referenceForward,
  referenceForwardMatrices, relativeError, sequenceGradcheck, SGD, Tensor, toMatrix,
} from "../ts/index.ts";

function stridedPasses(dtype: DType): number {
  const [B, F, S] = [7, 13, 21];
  using x0 = Tensor.randn([F + 2, B], { dtype, seed: 11 });
  using x1 = x0.narrow(0, 1, F);
  using input = x1.transpose();
  using w0 = Tensor.randn([S + F, 3 * S], { dtype, seed: 12 });
  using weights = w0.transpose();
  using bias = Tensor.randn([3 * S], { dtype, seed: 13 });
  using h0 = Tensor.randn([B, 2 * S], { dtype, seed: 14 });
  using oldH = h0.slice(1, 0, 2 * S, 2);
  using oldCell = Tensor.randn([B, S], { dtype, seed: 15 });
  using fw = lltmForward(input, weights, bias, oldH, oldCell);
  const ref = referenceForward(input, weights, bias, oldH, oldCell);
  let worst = Math.max(relativeError(fw.newH.toTypedArray(), ref.newH.data), relativeError(fw.newCell.toTypedArray(), ref.newCell.data));
  using g0 = Tensor.randn([S, B], { dtype, seed: 16 });
  using gradH = g0.transpose();
  using gradCell = Tensor.randn([B, S], { dtype, seed: 17 });
  const saved = [fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights, weights] as const;
  using g = lltmBackward(gradH, gradCell, ...saved);
  const refB = referenceBackward(gradH, gradCell, ...saved);
  for (const n of ["dOldH", "dInput", "dWeights", "dBias", "dOldCell"] as const) worst = Math.max(worst, relativeError(g[n].toTypedArray(), refB[n].data));
  return worst;
}

function elementwise(dtype: DType): number {
  const [lr, momentum, beta1, beta2, eps, alpha] = [0.05, 0.9, 0.8, 0.99, 1e-6, -0.75];
  using y = Tensor.randn([5, 9], { dtype, seed: 21 });
  using x0 = Tensor.randn([9, 5], { dtype, seed: 22 });
  using x = x0.transpose();
  const expectedAdd = y.toTypedArray().map((v, i) => v + alpha * x.toTypedArray()[i]!);
  y.add_(x, alpha);
  let worst = relativeError(y.toTypedArray(), expectedAdd);
  using m = new LLTMLayer(19, 23, { seed: 5, dtype });
  using g = Tensor.randn(m.weights.shape, { dtype, seed: 23 });
  m.weightsGrad.copyFrom(g);
  m.biasGrad.fill(0.5);
  const p0 = m.weights.toTypedArray(), grad = g.toTypedArray();
  using sgd = new SGD(m.parameters(), { lr, momentum });
  sgd.step();
  sgd.step();
  worst = Math.max(worst, relativeError(m.weights.toTypedArray(), p0.map((p, i) => p - lr * grad[i]! - lr * (momentum * grad[i]! + grad[i]!))));
  const p1 = m.weights.toTypedArray();
  using adam = new Adam(m.parameters(), { lr, betas: [beta1, beta2], eps });
  adam.step();
  const expectedAdam = p1.map((p, i) => {
    const mt = (1 - beta1) * grad[i]!, vt = (1 - beta2) * grad[i]! * grad[i]!;
    return p - (lr / (1 - beta1)) * mt / (Math.sqrt(vt) / Math.sqrt(1 - beta2) + eps);
  });
  return Math.max(worst, relativeError(m.weights.toTypedArray(), expectedAdam));
}

/** The sequence engine's every h against the float64 reference run step by step. */
function sequenceForward(dtype: DType): number {
  const [T, B, F, S] = [5, 7, 13, 21];
  using inputs = Tensor.randn([T, B, F], { dtype, seed: 31 });
  using m = new LLTMLayer(F, S, { dtype, seed: 32 });
  using h0 = Tensor.randn([B, S], { dtype, seed: 33 });
  using c0 = Tensor.randn([B, S], { dtype, seed: 34 });
  using fw = lltmSequenceForward(inputs, m.weights, m.bias, h0, c0);
  const x = Float64Array.from(inputs.toTypedArray());
  const [W, bias] = [toMatrix(m.weights), toMatrix(m.bias)];
  let h = toMatrix(h0), c = toMatrix(c0);
  const expected = new Float64Array(T * B * S);
  for (let t = 0; t < T; t++) {
    const out = referenceForwardMatrices({ rows: B, cols: F, data: x.subarray(t * B * F, (t + 1) * B * F) }, W, bias, h, c);
    expected.set(out.newH.data, t * B * S);
    [h, c] = [out.newH, out.newCell];
  }
  return relativeError(fw.outputs.toTypedArray(), expected);
}

let cpuKernels: string;
try {
  cpuKernels = backendInfo().cpuKernels;
} catch (e) {
  console.log(JSON.stringify({ error: (e as Error).message }));
  process.exit(0);
}
const errors: Record<string, number> = {};
for (const dtype of ["float32", "float64"] as const) errors[dtype] = Math.max(stridedPasses(dtype), elementwise(dtype), sequenceForward(dtype));
const sequenceBackward = sequenceGradcheck({ steps: 6, batch: 3, features: 4, state: 5, seed: 7 }).maxError;
console.log(JSON.stringify({ cpuKernels, errors, sequenceBackward }));
