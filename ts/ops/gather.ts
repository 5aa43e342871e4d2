/**
 * gather, as torch.gather(input, dim, index) (the GATHER op of
 * csrc/lltm_ops.def, which reads x [O, P, I] at an int32 index [O, Q, I]:
 * the dimensions before `dim` flattened to O, those after it to I): the
 * result has index's shape, each element taken from input at the position
 * along `dim` that index names; index's other sizes must equal input's
 * (torch also allows smaller ones). Float or int32 alike. An index outside
 * [0, input.shape[dim]) is refused, naming its position, before anything is
 * written. Its backward (GATHER_BACKWARD) adds the gradient into those
 * positions, repeats adding up, in the same order on every device.
 */
import { LLTMError } from "../errors.ts";
import { ACCUMULATE_PARAM_GRADS } from "../native/constants.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { aroundDim, checkedDim } from "./along_dim.ts";
import { checkCommon } from "./lltm.ts";
import { produce } from "./produce.ts";

const GATHER = native.op("GATHER"), BACKWARD = native.op("GATHER_BACKWARD");

const shapeOf = (shape: readonly number[]) => `[${shape.join(", ")}]`;

/** index checked against a tensor of `shape` (int32, the same rank, the same sizes but at dim), contiguous [O, Q, I]. */
function indexRows(fn: string, index: Tensor, shape: readonly number[], shapeName: string, dim: number): Tensor {
  if (index.dtype !== "int32") throw new LLTMError("INVALID_DTYPE", `${fn}: 'index' must be int32, got ${index.dtype}`);
  if (index.ndim !== shape.length || index.shape.some((n, i) => i !== dim && n !== shape[i])) {
    throw new LLTMError(
      "SHAPE_MISMATCH",
      `${fn}: 'index' has shape ${shapeOf(index.shape)} but ${shapeName} has ${shapeOf(shape)}; ` +
        `they must have the same rank and agree in every dimension but ${dim}`,
    );
  }
  using dense = index.contiguous();
  return dense.reshape(aroundDim(index.shape, dim));
}

/** input gathered along `dim` at index (int32, input's rank and sizes but at dim) -> a tensor of index's shape. */
export function gather(input: Tensor, dim: number, index: Tensor): Tensor {
  const fn = "gather";
  checkCommon(fn, ["input", "index"], [input, index]);
  const d = checkedDim(fn, dim, input.ndim);
  using index3 = indexRows(fn, index, input.shape, "'input'", d);
  using x3 = input.reshape(aroundDim(input.shape, d));
  const out = Tensor.empty(index.shape, { dtype: input.dtype, device: input.device });
  using out3 = out.reshape(index3.shape);
  return produce(GATHER, fn, [x3, index3, out3], out);
}

/**
 * The gradient of gather for an input of `inputShape` from gradOut (index's
 * shape) and index: a new tensor (0 where no index points), or, with `dInput`,
 * added into it (as autograd accumulates .grad), which is then returned.
 */
export function gatherBackward(
  gradOut: Tensor, dim: number, index: Tensor, inputShape: readonly number[], options: { dInput?: Tensor } = {},
): Tensor {
  const fn = "gatherBackward";
  const into = options.dInput;
  checkCommon(fn, into ? ["gradOut", "index", "dInput"] : ["gradOut", "index"], into ? [gradOut, index, into] : [gradOut, index]);
  if (!Array.isArray(inputShape) || inputShape.some((n) => !Number.isSafeInteger(n) || n < 1)) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'inputShape' must be an array of positive integers, got ${String(inputShape)}`);
  }
  const d = checkedDim(fn, dim, inputShape.length);
  using index3 = indexRows(fn, index, inputShape, "'inputShape'", d);
  if (gradOut.ndim !== index.ndim || gradOut.shape.some((n, i) => n !== index.shape[i])) {
    throw new LLTMError("SHAPE_MISMATCH", `${fn}: 'gradOut' has shape ${shapeOf(gradOut.shape)}; it must be index's, ${shapeOf(index.shape)}`);
  }
  using g3 = gradOut.reshape(index3.shape);
  if (into !== undefined) {
    if (into.ndim !== inputShape.length || into.shape.some((n, i) => n !== inputShape[i])) {
      throw new LLTMError("SHAPE_MISMATCH", `${fn}: 'dInput' has shape ${shapeOf(into.shape)}; it must be ${shapeOf(inputShape)}`);
    }
    using d3 = into.reshape(aroundDim(inputShape, d));
    native.run(BACKWARD, fn, [g3, index3, d3], ACCUMULATE_PARAM_GRADS);
    return into.retain();
  }
  const dInput = Tensor.empty(inputShape, { dtype: gradOut.dtype, device: gradOut.device });
  using d3 = dInput.reshape(aroundDim(inputShape, d));
  return produce(BACKWARD, fn, [g3, index3, d3], dInput);
}
