/** The inputs the bench and check scripts use, seeded as ../shared/bench/torch_lltm.py seeds its own. */
import { type DeviceLike, type DType, lltmForward, Tensor } from "../ts/index.ts";

export interface Sizes {
  batch: number;
  features: number;
  state: number;
}

export interface Workload extends Disposable {
  input: Tensor;
  weights: Tensor;
  bias: Tensor;
  oldH: Tensor;
  oldCell: Tensor;
}

export function workload({ batch: B, features: F, state: S }: Sizes, dtype: DType, device: DeviceLike): Workload {
  const o = { dtype, device };
  const scale = 1 / Math.sqrt(F + S);
  const weights = Tensor.randn([3 * S, S + F], { ...o, seed: 2 });
  const scaled = Tensor.fromTypedArray(weights.toTypedArray().map((v) => v * scale), weights.shape, o);
  weights.dispose();
  const w: Workload = {
    input: Tensor.randn([B, F], { ...o, seed: 1 }),
    weights: scaled,
    bias: Tensor.randn([3 * S], { ...o, seed: 3 }),
    oldH: Tensor.randn([B, S], { ...o, seed: 4 }),
    oldCell: Tensor.randn([B, S], { ...o, seed: 5 }),
    [Symbol.dispose]() {
      for (const t of [w.input, w.weights, w.bias, w.oldH, w.oldCell]) t.dispose();
    },
  };
  return w;
}

/** Runs one forward pass of the workload and returns its outputs. */
export function forward(w: Workload) {
  return lltmForward(w.input, w.weights, w.bias, w.oldH, w.oldCell);
}
