/**
 * A forward and backward pass on CUDA in both dtypes, small and strided, for
 * `compute-sanitizer --tool memcheck bun scripts/sanitize.ts`.
 */
import { cuda, lltmBackward, lltmForward, Tensor } from "../ts/index.ts";

for (const dtype of ["float32", "float64"] as const) {
  for (const [B, F, S] of [[1, 1, 1], [3, 5, 7], [17, 33, 65]] as const) {
    const o = { dtype, device: "cuda" as const };
    using xt = Tensor.randn([F, B], { ...o, seed: 1 });
    using x = xt.transpose();
    using w = Tensor.randn([3 * S, S + F], { ...o, seed: 2 });
    using b = Tensor.randn([3 * S], { ...o, seed: 3 });
    using h = Tensor.randn([B, S], { ...o, seed: 4 });
    using c = Tensor.randn([B, S], { ...o, seed: 5 });
    using out = lltmForward(x, w, b, h, c);
    using gh = Tensor.ones([B, S], o);
    using gc = Tensor.ones([B, S], o);
    using g = lltmBackward(gh, gc, out.newCell, out.inputGate, out.outputGate, out.candidateCell, out.X, out.gateWeights, w);
    g.dWeights.toTypedArray();
  }
}
cuda.synchronize();
console.log("sanitize: forward and backward ran on CUDA");
