/**
 * Choosing classes from scores, on the device: argmax per row, and
 * multinomial sampling per row from a counter-based generator (the same seed
 * and offset draw the same indices on every device). Their int32 results
 * need no gradient.
 */
import { LLTMError } from "../errors.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon } from "./lltm.ts";

const ARGMAX = native.op("ARGMAX"), MULTINOMIAL = native.op("MULTINOMIAL");

function rowsOf(fn: string, name: string, x: Tensor): number {
  checkCommon(fn, [name], [x]);
  if (x.ndim !== 2) throw new LLTMError("SHAPE_MISMATCH", `${fn}: '${name}' must be [N, V], got [${x.shape.join(", ")}]`);
  return x.shape[0]!;
}

function indices(o: native.Op, fn: string, x: Tensor, n: number, scalars?: readonly number[]): Tensor {
  const out = Tensor.empty([n], { dtype: "int32", device: x.device });
  try {
    native.run(o, fn, [x, out], 0, scalars);
  } catch (e) {
    out.dispose();
    throw e;
  }
  return out;
}

/** The index of each row's largest element of x [N, V]: int32 [N]. */
export function argmax(x: Tensor): Tensor {
  return indices(ARGMAX, "argmax", x, rowsOf("argmax", "x", x));
}

export interface MultinomialOptions {
  /** The generator's key (default 0). */
  seed?: number;
  /** Which draw of that key (default 0): a new offset per call gives new samples. */
  offset?: number;
}

/** One index per row of probs [N, V] (non-negative weights, not all 0), drawn in proportion to them: int32 [N]. */
export function multinomial(probs: Tensor, options: MultinomialOptions = {}): Tensor {
  return indices(MULTINOMIAL, "multinomial", probs, rowsOf("multinomial", "probs", probs), [options.seed ?? 0, options.offset ?? 0]);
}
