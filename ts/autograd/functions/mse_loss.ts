/** mseLoss, as torch.nn.functional.mse_loss: the mean (or sum) of the squared differences, composed of the tape's sub, mul and sum. */
import { LLTMError } from "../../errors.ts";
import type { Tensor } from "../../tensor/index.ts";
import { mean, mul, sub, sum } from "./elementwise.ts";

/** Σ(input − target)² over the elements, divided by their count for "mean" (the default): [1]. */
export function mseLoss(input: Tensor, target: Tensor, options: { reduction?: "mean" | "sum" } = {}): Tensor {
  const reduction = options.reduction ?? "mean";
  if (reduction !== "mean" && reduction !== "sum") {
    throw new LLTMError("INVALID_ARGUMENT", `mseLoss: 'reduction' must be "mean" or "sum", got ${JSON.stringify(reduction)}`);
  }
  using d = sub(input, target);
  using squared = mul(d, d);
  return reduction === "mean" ? mean(squared) : sum(squared);
}
