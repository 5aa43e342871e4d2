/**
 * Post-accumulate gradient hooks (as torch's register_post_accumulate_grad_hook),
 * which data parallelism starts each bucket's reduction from: a hook runs once
 * per backward pass, after every node feeding the leaf has run, with .grad
 * holding the pass's whole gradient; leaves the pass does not reach are left
 * alone; a removed hook stays silent.
 */
import { add, mul, sum, Tensor } from "../ts/index.ts";
import { registerPostAccumulateGradHook } from "../ts/autograd/hooks.ts";
import { assertEquals, test } from "./harness.ts";

test("a post-accumulate hook sees the leaf's whole gradient, once per backward pass", () => {
  using w = Tensor.fromArray([1, 2, 3]).requiresGrad_();
  using unused = Tensor.fromArray([4]).requiresGrad_();
  const seen: number[][] = [];
  let unusedCalls = 0;
  const hook = registerPostAccumulateGradHook(w, (leaf) => seen.push([...leaf.grad!.toTypedArray()]));
  registerPostAccumulateGradHook(unused, () => unusedCalls++);
  const pass = () => {
    // d/dw (Σ w·w + Σ w) = 2w + 1, reaching w through three edges.
    using squares = mul(w, w);
    using a = sum(squares);
    using b = sum(w);
    using loss = add(a, b);
    loss.backward();
  };
  pass();
  assertEquals(seen, [[3, 5, 7]]);
  pass();
  assertEquals(seen, [[3, 5, 7], [6, 10, 14]], "the second pass's hook sees the accumulated .grad");
  hook.remove();
  pass();
  assertEquals(seen.length, 2);
  assertEquals(unusedCalls, 0);
});
