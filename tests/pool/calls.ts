/**
 * The calls of the pool's oversubscription test: forward and backward at a
 * few sizes (1, odd, non-power-of-two, large enough to be split) in
 * float32, float64 and bfloat16 (the CPU's own bfloat16 kernels where it
 * has AVX512_BF16), and a 5-step sequence forward and backward on the same
 * tensors (the sequence engine), with fixed seeds, and their outputs as typed arrays.
 */
import {
  type DType, lltmBackward, lltmForward, lltmSequenceBackward, lltmSequenceForward, Tensor,
} from "../../ts/index.ts";
import type { ValueArray } from "../../ts/dtype.ts";

/** [B, F, S]: tiny (never split), the benchmark size, the held-out case of issue 8, and others. */
export const sizes: readonly (readonly [number, number, number])[] = [
  [1, 1, 1],
  [16, 32, 128],
  [33, 1, 257],
  [7, 13, 45],
  [64, 16, 96],
];
export const dtypes: readonly DType[] = ["float32", "float64", "bfloat16"];
export const caseCount = sizes.length * dtypes.length;

/** Every output of one forward and one backward call of case `k`, in a fixed order. */
export function runCase(k: number): ValueArray[] {
  const [B, F, S] = sizes[k % sizes.length]!;
  const dtype = dtypes[Math.floor(k / sizes.length)]!;
  const o = (seed: number) => ({ dtype, seed: 1000 * k + seed });
  using input = Tensor.randn([B, F], o(1));
  using weights = Tensor.randn([3 * S, S + F], o(2));
  using bias = Tensor.randn([3 * S], o(3));
  using h = Tensor.randn([B, S], o(4));
  using c = Tensor.randn([B, S], o(5));
  using gradH = Tensor.randn([B, S], o(6));
  using gradC = Tensor.randn([B, S], o(7));
  using f = lltmForward(input, weights, bias, h, c);
  using g = lltmBackward(gradH, gradC, f.newCell, f.inputGate, f.outputGate, f.candidateCell, f.X, f.gateWeights, weights);
  using inputs = Tensor.randn([5, B, F], o(8));
  using sf = lltmSequenceForward(inputs, weights, bias, h, c);
  using sg = lltmSequenceBackward(sf.outputs, gradH, gradC, sf.reserve!, inputs, weights, h);
  return [f.newH, f.newCell, f.inputGate, f.outputGate, f.candidateCell, f.X, f.gateWeights,
          g.dOldH, g.dInput, g.dWeights, g.dBias, g.dOldCell,
          sf.outputs, sf.lastH, sf.lastCell, sg.dInputs, sg.dWeights, sg.dBias, sg.dH0, sg.dC0].map((t) => t.toTypedArray());
}

/** Whether two output lists are equal bit for bit. */
export function identical(a: readonly ValueArray[], b: readonly ValueArray[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; ++i) {
    const x = new Uint8Array(a[i]!.buffer, a[i]!.byteOffset, a[i]!.byteLength);
    const y = new Uint8Array(b[i]!.buffer, b[i]!.byteOffset, b[i]!.byteLength);
    if (x.length !== y.length) return false;
    for (let j = 0; j < x.length; ++j) if (x[j] !== y[j]) return false;
  }
  return true;
}
