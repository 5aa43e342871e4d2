/** SGD with momentum, as torch.optim.SGD (dampening 0, no Nesterov): lltm_sgd_step per parameter (or per flat buffer, fused). */
import { LLTMError } from "../errors.ts";
import * as native from "../native/index.ts";
import type { Capture } from "../graph/capture.ts";
import { checkOptionNames, type Hyper, type MasterWeightsOption, Optimizer, type Parameters, type UpdateUnit } from "./optimizer.ts";

const SGD_STEP = native.op("SGD_STEP");

export interface SGDOptions extends MasterWeightsOption {
  lr: number;
  momentum?: number;
}

export class SGD extends Optimizer {
  constructor(params: Parameters<SGDOptions>, options: SGDOptions) {
    if (typeof options !== "object" || options === null || options.lr === undefined) {
      throw new LLTMError("INVALID_ARGUMENT", "SGD: options must give 'lr'");
    }
    checkOptionNames("SGD", options, ["lr", "momentum", "masterWeights", "fused"]);
    const momentum = options.momentum ?? 0;
    super("SGD", SGD_STEP, params as Parameters<Hyper>, { lr: options.lr, momentum }, {}, momentum === 0 ? [] : ["momentum_buffer"],
      options.masterWeights, options.fused);
    if (this.groups.some((g) => (g.momentum === 0) !== (momentum === 0))) {
      throw new LLTMError("INVALID_ARGUMENT", "SGD: every group must have momentum, or none (the momentum buffers are made for all or none)");
    }
  }

  get momentum(): number {
    return this.groups[0]!.momentum!;
  }

  /** param -= lr * (momentum buffer or gradient), for every parameter with a gradient. */
  protected update(fn: string, _capture: Capture | undefined, units: readonly UpdateUnit[]): void {
    for (const { group, target, grad, state } of units) {
      const { lr, momentum } = this.groups[group]!;
      native.run(SGD_STEP, fn, [target, grad, state.get("momentum_buffer")], 0, [lr!, momentum!]);
    }
  }

  protected override checkLoaded(fn: string, loaded: Hyper, mine: Hyper): void {
    if ((loaded.momentum === 0) !== (mine.momentum === 0)) {
      throw new LLTMError(
        "INVALID_ARGUMENT",
        `${fn}: the state has momentum ${loaded.momentum}, this SGD ${mine.momentum}; make the SGD with the state's momentum`,
      );
    }
  }
}
