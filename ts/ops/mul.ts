/**
 * mul, as torch.mul: a * b elementwise (the MUL op of csrc/lltm_ops.def),
 * b of a's shape or broadcasting to it; and its backward, d_a = grad * b and
 * d_b = grad * a (for b of a's shape).
 */
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon } from "./lltm.ts";
import { broadcastTo, checkFloats, produce, resultDType } from "./produce.ts";

const MUL = native.op("MUL");

/** a * b. */
export function mul(a: Tensor, b: Tensor): Tensor {
  const fn = "mul";
  checkCommon(fn, ["a", "b"], [a, b]);
  checkFloats(fn, ["a", "b"], [a, b]);
  using wide = broadcastTo(fn, b, "b", a, "a");
  const out = Tensor.empty(a.shape, { dtype: resultDType(a, b), device: a.device });
  return produce(MUL, fn, [out, a, wide], out);
}

export interface MulGradients extends Disposable {
  dA: Tensor;
  dB: Tensor;
  dispose(): void;
}

/** The gradients of a * b (equal shapes) from gradOut: dA = gradOut * b, dB = gradOut * a. */
export function mulBackward(gradOut: Tensor, a: Tensor, b: Tensor): MulGradients {
  const fn = "mulBackward";
  checkCommon(fn, ["gradOut", "a", "b"], [gradOut, a, b]);
  checkFloats(fn, ["gradOut", "a", "b"], [gradOut, a, b]);
  const dA = Tensor.empty(a.shape, { dtype: a.dtype, device: a.device });
  produce(MUL, fn, [dA, gradOut, b], dA, undefined, 0, { a: "'gradOut'", b: "'b'", out: "'a'" });
  const dB = Tensor.empty(b.shape, { dtype: b.dtype, device: b.device });
  try {
    produce(MUL, fn, [dB, gradOut, a], dB, undefined, 0, { a: "'gradOut'", b: "'a'", out: "'b'" });
  } catch (e) {
    dA.dispose();
    throw e;
  }
  const dispose = () => {
    dA.dispose();
    dB.dispose();
  };
  return { dA, dB, dispose, [Symbol.dispose]: dispose };
}
