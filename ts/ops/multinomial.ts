/**
 * multinomial sampling on the device (the MULTINOMIAL op of
 * csrc/lltm_ops.def): one index per row of probs [..., V], drawn with
 * probability proportional to the row's weights by a counter-based
 * generator keyed by (seed, offset, row), so that a seed reproduces a run on
 * either device. A Generator hands out consecutive offsets, as PyTorch's
 * Philox offsets advance.
 */
import { LLTMError } from "../errors.ts";
import { refuseUnderCapture } from "../graph/capture.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkCommon } from "./lltm.ts";
import { produce } from "./produce.ts";
import { rows, unflattenRows } from "./rows.ts";

const MULTINOMIAL = native.op("MULTINOMIAL");
const MAX_COUNTER = Number.MAX_SAFE_INTEGER;

/** A seed and the offset of the next draw: each multinomial call takes as many offsets as it draws rows. */
export class Generator {
  readonly seed: number;
  offset: number;

  constructor(seed = 0, offset = 0) {
    for (const [name, v] of [["seed", seed], ["offset", offset]] as const) {
      if (!Number.isSafeInteger(v) || v < 0) {
        throw new LLTMError("INVALID_ARGUMENT", `Generator: ${name} must be an integer from 0 to 2^53-1, got ${v}`);
      }
    }
    this.seed = seed;
    this.offset = offset;
  }
}

/**
 * One int32 index per row of probs ([..., V] -> [...]); weights need not sum
 * to 1 but must be non-negative and finite with a positive sum per row.
 * `generator` (default: seed 0 from offset 0 each call) advances by the row count.
 */
export function multinomial(probs: Tensor, options: { generator?: Generator } = {}): Tensor {
  const fn = "multinomial";
  checkCommon(fn, ["probs"], [probs]);
  const g = options.generator;
  if (g !== undefined && !(g instanceof Generator)) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'generator' must be a Generator`);
  }
  using p2 = rows(probs);
  const n = p2.shape[0]!;
  refuseUnderCapture(fn, "its generator's offset is counted on the host, so every replay would draw the same indices");
  const seed = g?.seed ?? 0, offset = g?.offset ?? 0;
  if (offset + n > MAX_COUNTER) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: the generator's offset ${offset} has no room for ${n} more draws`);
  }
  const indices = Tensor.empty([n], { dtype: "int32", device: probs.device });
  produce(MULTINOMIAL, fn, [p2, indices], indices, [seed, offset]);
  if (g !== undefined) g.offset = offset + n;
  return unflattenRows(indices, probs.shape);
}
