/**
 * Adam and AdamW, as torch.optim's: lltm_adam_step per parameter; AdamW first
 * decays each parameter by lr·weightDecay (decoupled weight decay) with the
 * library's axpy, on the parameter's device.
 */
import { LLTMError } from "../errors.ts";
import * as native from "../native/index.ts";
import { checkOptionNames, type Hyper, type MasterWeightsOption, Optimizer, type Parameters } from "./optimizer.ts";

const ADAM_STEP = native.op("ADAM_STEP"), AXPY = native.op("AXPY");

export interface AdamOptions extends MasterWeightsOption {
  lr?: number;
  betas?: readonly [number, number];
  eps?: number;
}

export interface AdamWOptions extends AdamOptions {
  /** Decoupled weight decay: each step first multiplies the parameter by 1 - lr·weightDecay (default 0.01). */
  weightDecay?: number;
}

/** Options as a group's hyperparameters (betas split in two, as the op's scalars are). */
function hyperOf(kind: string, options: AdamWOptions, decoupled: boolean): Hyper {
  if (typeof options !== "object" || options === null) throw new LLTMError("INVALID_ARGUMENT", `${kind}: options must be an object`);
  checkOptionNames(kind, options, ["lr", "betas", "eps", "weightDecay", "masterWeights"]);
  const betas = options.betas;
  if (betas !== undefined && (!Array.isArray(betas) || betas.length !== 2)) {
    throw new LLTMError("INVALID_ARGUMENT", `${kind}: 'betas' must be a pair [beta1, beta2]`);
  }
  if (!decoupled && options.weightDecay !== undefined) {
    throw new LLTMError("INVALID_ARGUMENT", `${kind}: 'weightDecay' is AdamW's (decoupled weight decay); use AdamW`);
  }
  const hyper: Hyper = {};
  if (options.lr !== undefined) hyper.lr = options.lr;
  if (betas !== undefined) [hyper.beta1, hyper.beta2] = betas;
  if (options.eps !== undefined) hyper.eps = options.eps;
  if (options.weightDecay !== undefined) hyper.weightDecay = options.weightDecay;
  return hyper;
}

function groupsOf(kind: string, params: Parameters<AdamWOptions>, decoupled: boolean): Parameters<Hyper> {
  const list = params !== null && typeof params === "object" && Symbol.iterator in params ? [...params as Iterable<unknown>] : [];
  if (list.length > 0 && list.every((g) => typeof g === "object" && g !== null && "params" in g)) {
    return (list as { params: Iterable<never>; options?: AdamWOptions }[]).map((g) => ({
      params: g.params,
      options: hyperOf(kind, g.options ?? {}, decoupled),
    }));
  }
  return list as Parameters<Hyper>;
}

/** Adam's update, with or without decoupled weight decay. */
abstract class AdamBase extends Optimizer {
  protected constructor(kind: string, params: Parameters<AdamWOptions>, options: AdamWOptions, weightDecay: number | undefined) {
    const decoupled = weightDecay !== undefined;
    const defaults: Hyper = { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 };
    if (decoupled) defaults.weightDecay = weightDecay;
    super(kind, ADAM_STEP, groupsOf(kind, params, decoupled), { ...defaults, ...hyperOf(kind, options, decoupled) }, { step: 0 }, [
      "exp_avg",
      "exp_avg_sq",
    ], options.masterWeights);
  }

  get betas(): readonly [number, number] {
    return [this.groups[0]!.beta1!, this.groups[0]!.beta2!];
  }

  get eps(): number {
    return this.groups[0]!.eps!;
  }

  /** Steps taken so far. */
  get steps(): number {
    return this.counters.step!;
  }

  protected update(fn: string): void {
    const step = this.counters.step! + 1;
    this.params.forEach((p, i) => {
      const grad = this.gradient(i);
      if (grad === undefined) return;
      const { lr, beta1, beta2, eps, weightDecay } = this.groups[p.group]! as Record<string, number>;
      const target = this.target(i);
      if (weightDecay) native.run(AXPY, fn, [target, target], 0, [-lr! * weightDecay]);
      const s = this.state[i]!;
      native.run(ADAM_STEP, fn, [target, grad, s.get("exp_avg"), s.get("exp_avg_sq")], 0, [lr!, beta1!, beta2!, eps!, step]);
    });
    this.counters.step = step;
  }

  protected override checkHyper(fn: string, hyper: Hyper): void {
    super.checkHyper(fn, hyper);
    const wd = hyper.weightDecay;
    if (wd !== undefined && !(Number.isFinite(wd) && wd >= 0)) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'weightDecay' must be a finite number ≥ 0, got ${wd}`);
    }
  }

  protected override checkCounters(fn: string, counters: Hyper): void {
    if (!Number.isSafeInteger(counters.step) || counters.step! < 0) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state's step must be a count of steps, got ${counters.step}`);
    }
  }
}

/** torch.optim.Adam (no weight decay, no AMSGrad). */
export class Adam extends AdamBase {
  constructor(params: Parameters<AdamOptions>, options: AdamOptions = {}) {
    super("Adam", params, options, undefined);
  }
}

/** Adam with decoupled weight decay (Loshchilov & Hutter), as torch.optim.AdamW (weightDecay 0.01 by default). */
export class AdamW extends AdamBase {
  constructor(params: Parameters<AdamWOptions>, options: AdamWOptions = {}) {
    super("AdamW", params, options, 0.01);
  }

  get weightDecay(): number {
    return this.groups[0]!.weightDecay!;
  }
}
