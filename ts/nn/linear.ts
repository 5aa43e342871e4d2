/** Linear, as torch.nn.Linear: y = x Wᵀ + b over the last dimension, weight [out, in] and bias [out] uniform in ±1/√in. */
import { linear } from "../autograd/functions/linear.ts";
import { LLTMError } from "../errors.ts";
import { Random } from "../random.ts";
import type { Tensor } from "../tensor/index.ts";
import { checkSizes, type ParameterOptions, placement, uniform } from "./init.ts";
import { Module } from "./module.ts";

export interface LinearOptions extends ParameterOptions {
  /** Whether to add a bias (default true). */
  bias?: boolean;
}

export class Linear extends Module {
  readonly inFeatures: number;
  readonly outFeatures: number;
  private readonly hasBias: boolean;

  constructor(inFeatures: number, outFeatures: number, options: LinearOptions = {}) {
    super("Linear");
    checkSizes("Linear", { inFeatures, outFeatures });
    this.inFeatures = inFeatures;
    this.outFeatures = outFeatures;
    const at = placement("Linear", options);
    const rng = new Random(options.seed ?? 0);
    const bound = 1 / Math.sqrt(inFeatures);
    this.registerParameter("weight", uniform("Linear", [outFeatures, inFeatures], bound, rng, at));
    this.hasBias = options.bias ?? true;
    if (this.hasBias) this.registerParameter("bias", uniform("Linear", [outFeatures], bound, rng, at));
  }

  get weight(): Tensor {
    return this.parameter("weight");
  }

  get bias(): Tensor | undefined {
    return this.hasBias ? this.parameter("bias") : undefined;
  }

  /** x [..., inFeatures] -> [..., outFeatures]. */
  forward(x: Tensor): Tensor {
    const fn = "Linear.forward";
    this.assertLive(fn);
    x.assertLive(`${fn}: the input`);
    const width = x.shape[x.ndim - 1];
    if (x.ndim < 1 || width !== this.inFeatures) {
      throw new LLTMError(
        "SHAPE_MISMATCH",
        `${fn}: the input has shape [${x.shape.join(", ")}]: its last dimension must be this Linear's inFeatures, ${this.inFeatures}`,
      );
    }
    return linear(x, this.weight, this.bias);
  }
}
