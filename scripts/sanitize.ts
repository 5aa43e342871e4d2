/**
 * A forward and backward pass on CUDA in both dtypes, small and strided, then
 * a module trained a few steps through time with Adam and SGD, for
 * `compute-sanitizer --tool memcheck bun scripts/sanitize.ts`.
 */
import { Adam, cuda, LLTMLayer, lltmBackward, lltmForward, SGD, Tensor } from "../ts/index.ts";
import { parseArgs } from "./args.ts";

parseArgs(process.argv.slice(2), {}, "usage: compute-sanitizer --tool memcheck bun scripts/sanitize.ts");

for (const dtype of ["float32", "float64"] as const) {
  for (const [B, F, S] of [[1, 1, 1], [3, 5, 7], [17, 33, 65], [37, 9, 45]] as const) {
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
for (const dtype of ["float32", "float64"] as const) {
  using model = new LLTMLayer(3, 5, { dtype, device: "cuda", seed: 1 });
  using adam = new Adam(model.parameters(), { lr: 0.01 });
  using sgd = new SGD(model.parameters(), { lr: 0.01, momentum: 0.9 });
  using xs = Tensor.randn([6, 4, 3], { dtype, device: "cuda", seed: 2 });
  const [h0, c0] = model.initialState(4);
  for (let i = 0; i < 3; i++) {
    using seq = model.sequence(xs, [h0, c0]);
    using ones = Tensor.ones([6, 4, 5], { dtype, device: "cuda" });
    model.zeroGrad();
    using g = seq.backward(ones);
    adam.step();
    sgd.step();
  }
  h0.dispose();
  c0.dispose();
}
cuda.synchronize();
console.log("sanitize: forward, backward, sequences and optimizers ran on CUDA");
